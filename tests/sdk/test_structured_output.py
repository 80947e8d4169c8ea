"""Structured output (`PeriOptions.output_format`) against the fake server: the model answers
through the StructuredOutput tool; one retry says what failed; then the prompt is an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from peri_cli.sdk import (
    OptionError,
    PeriOptions,
    ResultEvent,
    SystemEvent,
    ToolResultEvent,
    query,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for, sent_text

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["answer", "count"],
    "additionalProperties": False,
}
GOOD = {"answer": "forty-two", "count": 42}
BAD = {"answer": "forty-two", "count": "many"}


def answer(value: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": "StructuredOutput", "input": value}]}


async def run(server: FakeServer, tmp_path: Path, script: list[dict[str, Any]]) -> ResultEvent:
    server.set_script(script)
    fmt = {"type": "json_schema", "schema": SCHEMA}
    events = [e async for e in query("count it", options_for(server, tmp_path, output_format=fmt))]
    result = events[-1]
    assert isinstance(result, ResultEvent)
    return result


async def test_a_valid_first_answer_is_the_structured_output(
    server: FakeServer, tmp_path: Path
) -> None:
    result = await run(server, tmp_path, [answer(GOOD), {"text": "done"}])
    assert result.structured_output == GOOD
    assert result.subtype == "success" and not result.is_error
    assert json.loads(result.to_json())["structured_output"] == GOOD
    (first, _) = model_calls(server)
    (tool,) = [t for t in first["tools"] if t["name"] == "StructuredOutput"]
    assert tool["input_schema"] == SCHEMA
    assert "exactly once" in tool["description"]


async def test_an_invalid_answer_is_refused_and_the_retry_says_why(
    server: FakeServer, tmp_path: Path
) -> None:
    script = [answer(BAD), {"text": "there"}, answer(GOOD), {"text": "done"}]
    result = await run(server, tmp_path, script)
    assert result.structured_output == GOOD and result.subtype == "success"
    calls = model_calls(server)
    assert len(calls) == 4
    assert "count: 'many' is not of type 'integer'" in sent_text(calls[1])  # the tool's error
    last_user = calls[2]["messages"][-1]
    assert "did not fit the required schema" in json.dumps(last_user)
    assert "count: 'many' is not of type 'integer'" in json.dumps(last_user)


async def test_a_refused_call_is_an_error_tool_result(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([answer(BAD), {"text": "x"}, answer(GOOD), {"text": "done"}])
    fmt = {"type": "json_schema", "schema": SCHEMA}
    events = [e async for e in query("count", options_for(server, tmp_path, output_format=fmt))]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [r.is_error for r in results] == [True, False]
    assert "count" in results[0].content


async def test_two_invalid_answers_end_in_the_retries_error(
    server: FakeServer, tmp_path: Path
) -> None:
    script = [answer(BAD), {"text": "there"}, answer(BAD), {"text": "again"}]
    result = await run(server, tmp_path, script)
    assert result.is_error
    assert result.subtype == "error_max_structured_output_retries"
    assert "count: 'many' is not of type 'integer'" in (result.error or "")
    assert "structured_output" not in result.to_dict()
    assert len(model_calls(server)) == 4  # one retry, no more


async def test_an_answer_without_the_call_is_sent_back_once(
    server: FakeServer, tmp_path: Path
) -> None:
    script = [{"text": "it is 42"}, answer(GOOD), {"text": "done"}]
    result = await run(server, tmp_path, script)
    assert result.structured_output == GOOD and result.subtype == "success"
    retry = model_calls(server)[1]["messages"][-1]
    assert "call StructuredOutput now" in json.dumps(retry)


async def test_no_call_at_all_ends_in_the_retries_error(server: FakeServer, tmp_path: Path) -> None:
    result = await run(server, tmp_path, [{"text": "42"}, {"text": "still 42"}])
    assert result.subtype == "error_max_structured_output_retries"
    assert "was not called" in (result.error or "")


async def test_the_tool_is_in_the_request_only_for_runs_that_ask(
    server: FakeServer, tmp_path: Path
) -> None:
    """A session that answered structured, resumed without asking, sends no such tool; a plain
    session resumed with a schema gets it for that run."""
    structured = await run(server, tmp_path, [answer(GOOD), {"text": "done"}])
    server.set_script([{"text": "plain"}, answer(GOOD), {"text": "done"}])
    plain = options_for(server, tmp_path, resume=structured.session_id)
    again = [e async for e in query("and now in words", plain)][-1]
    assert isinstance(again, ResultEvent) and "structured_output" not in again.to_dict()
    assert again.result == "plain"
    fmt = {"type": "json_schema", "schema": SCHEMA}
    asked = options_for(server, tmp_path, resume=structured.session_id, output_format=fmt)
    last = [e async for e in query("count again", asked)][-1]
    assert isinstance(last, ResultEvent) and last.structured_output == GOOD
    names = [[t["name"] for t in c["tools"]] for c in model_calls(server)]
    assert ["StructuredOutput" in n for n in names] == [True, True, False, True, True]


async def test_a_subagent_never_gets_the_tool_and_init_lists_it(
    server: FakeServer, tmp_path: Path
) -> None:
    agent = {"name": "Agent", "input": {"prompt": "job one", "description": "a job"}}
    server.set_script(
        [
            {"when": "count it", "tool_calls": [agent]},
            {"when": "job one", "text": "report"},
            {"when": "count it", **answer(GOOD)},
            {"when": "count it", "text": "done"},
        ]
    )
    fmt = {"type": "json_schema", "schema": SCHEMA}
    options = options_for(server, tmp_path, output_format=fmt, permission_mode="bypass")
    events = [e async for e in query("count it", options)]
    init = events[0]
    assert isinstance(init, SystemEvent) and "StructuredOutput" in init.data["tools"]
    result = events[-1]
    assert isinstance(result, ResultEvent) and result.structured_output == GOOD
    calls = model_calls(server)
    child = [c for c in calls if "job one" in json.dumps(c["messages"][0])]
    assert child and all("StructuredOutput" not in [t["name"] for t in c["tools"]] for c in child)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("json", "must be a mapping"),
        ({"type": "text"}, "'type' must be 'json_schema'"),
        ({"type": "json_schema"}, "'schema' must be a JSON Schema object"),
        ({"type": "json_schema", "schema": {"type": "wrong"}}, "not a valid JSON Schema"),
        ({"type": "json_schema", "schema": {"type": "array"}}, "must describe an object"),
    ],
)
def test_a_bad_output_format_is_refused_naming_the_option(given: Any, says: str) -> None:
    with pytest.raises(OptionError, match=says) as refused:
        PeriOptions(output_format=given)
    assert refused.value.option == "output_format"
    assert "PeriOptions.output_format" in str(refused.value)
