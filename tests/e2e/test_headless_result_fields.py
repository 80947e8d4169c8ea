"""`peri -p --output-format json` carries the Claude Agent SDK's result fields (issue 40):
`subtype`, `total_cost_usd`, `duration_ms`, `duration_api_ms` (the golden files hide the times)."""

from __future__ import annotations

from tests.e2e.conftest import Peri


def test_json_result_has_subtype_cost_and_durations(peri: Peri) -> None:
    peri.server.set_script(
        [{"text": "hi there", "delay": 0.05, "usage": {"input_tokens": 1000, "output_tokens": 10}}]
    )
    result = peri.json("-p", "say hi")
    assert result["subtype"] == "success" and not result["is_error"]
    assert result["duration_ms"] >= result["duration_api_ms"] >= 40
    cost = result["total_cost_usd"]
    assert cost is None or (isinstance(cost, float) and cost > 0)


def test_max_turns_is_error_max_turns(peri: Peri) -> None:
    peri.server.set_script(
        [{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}, {"text": "never"}]
    )
    result = peri.json("-p", "look", "--max-turns", "1")
    assert result["is_error"] and result["subtype"] == "error_max_turns"
