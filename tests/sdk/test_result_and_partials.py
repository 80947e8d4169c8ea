"""What the door adds for a face that shows Peri to a person: the model's stop reason on the
result (never on its `stream-json` line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peri_cli.sdk import (
    PeriClient,
    PeriError,
    PeriOptions,
    ResultEvent,
    SubagentEvent,
    ToolProgressEvent,
    ToolUseEvent,
    query,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import options_for


@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "end_turn"])
async def test_the_result_carries_the_models_stop_reason_off_its_line(
    server: FakeServer, tmp_path: Path, stop: str
) -> None:
    server.set_script([{"text": "so far", "stop_reason": stop}])
    events = [e async for e in query("hi", options_for(server, tmp_path))]
    result = events[-1]
    assert isinstance(result, ResultEvent)
    assert result.stop_reason == stop
    assert "stop_reason" not in json.loads(result.to_json())
    assert "stop_reason" not in result.to_dict()


async def test_listing_models_without_a_key_keeps_the_credentials_problem(tmp_path: Path) -> None:
    options = PeriOptions(
        cwd=tmp_path,
        peri_home=tmp_path / ".peri",
        provider="anthropic",
        env={"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""},
    )
    async with PeriClient(options) as client:
        assert "ANTHROPIC_API_KEY" in (client.credentials_problem or "")
        await client.list_models()  # an editor's session/new asks for the model option
        assert "ANTHROPIC_API_KEY" in (client.credentials_problem or "")
        with pytest.raises(PeriError, match="ANTHROPIC_API_KEY"):
            await client.send("hi")


async def test_a_running_bash_reports_its_output_as_partial_events(
    server: FakeServer, tmp_path: Path
) -> None:
    command = "echo first-part; sleep 1; echo second-part"
    server.set_script([{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}])
    options = options_for(server, tmp_path, permission_mode="bypass", include_partial_messages=True)
    events = [e async for e in query("run", options)]
    (use,) = [e for e in events if isinstance(e, ToolUseEvent)]
    progress = [e for e in events if isinstance(e, ToolProgressEvent)]
    assert progress and all(p.tool_use_id == use.id and p.name == "Bash" for p in progress)
    assert "first-part" in progress[0].text and "second-part" not in progress[0].text
    quiet = [e async for e in query("run", options_for(server, tmp_path / "q"))]
    assert not [e for e in quiet if e.type == "tool_progress"]


async def test_subagent_events_name_the_agent_call_that_started_them(
    server: FakeServer, tmp_path: Path
) -> None:
    agent = {"name": "Agent", "input": {"prompt": "job one", "description": "a job"}}
    server.set_script(
        [
            {"when": "parent", "tool_calls": [agent]},
            {"when": "job one", "text": "report"},
            {"when": "parent", "text": "done"},
        ]
    )
    options = options_for(server, tmp_path, permission_mode="bypass", include_partial_messages=True)
    events = [e async for e in query("parent", options)]
    (use,) = [e for e in events if isinstance(e, ToolUseEvent) and e.agent_id is None]
    children = [e for e in events if isinstance(e, SubagentEvent)]
    assert {e.subtype for e in children} >= {"started", "finished"}
    assert all(e.tool_use_id == use.id for e in children)
