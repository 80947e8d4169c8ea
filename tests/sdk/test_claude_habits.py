"""The Claude Agent SDK's habits on `PeriClient` (issue 40): `query()`, `receive_response()` as an
async iterator, `receive_messages()` across prompts, `disconnect()`, `set_permission_mode()`,
`dontAsk`, content blocks, and the result's subtype, cost and durations."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from peri_cli.sdk import (
    Allow,
    AssistantEvent,
    Deny,
    OptionError,
    PeriClient,
    PermissionContext,
    ResultEvent,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolResultEvent,
    ToolUseBlock,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import options_for


async def test_query_and_receive_response_as_in_the_claude_sdk(
    server: FakeServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("the notes\n")
    server.set_script(
        [
            {
                "thinking": "look first",
                "tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}],
            },
            {"text": "Read them."},
        ]
    )
    blocks: list[Any] = []
    results: list[ToolResultBlock] = []
    async with PeriClient(options_for(server, tmp_path)) as client:
        await client.query("read the notes")
        async for message in client.receive_response():
            if isinstance(message, AssistantEvent):
                blocks += message.content
            elif isinstance(message, ToolResultEvent):
                results.append(message.block)
            elif isinstance(message, ResultEvent):
                result = message
    kinds = [type(b) for b in blocks]
    assert ThinkingBlock in kinds and ToolUseBlock in kinds and TextBlock in kinds
    (use,) = [b for b in blocks if isinstance(b, ToolUseBlock)]
    assert use.name == "Read" and use.input == {"file_path": "notes.txt"}
    assert results[0].tool_use_id == use.id and "the notes" in str(results[0].content)
    assert result.subtype == "success" and result.num_turns == 2
    assert result.duration_ms >= result.duration_api_ms >= 0
    assert result.total_cost_usd is None or result.total_cost_usd > 0
    line = json.loads(result.to_json())
    assert {"subtype", "total_cost_usd", "duration_ms", "duration_api_ms"} <= set(line)


async def test_receive_messages_spans_prompts_until_disconnect(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "one"}, {"text": "two"}])
    client = PeriClient(options_for(server, tmp_path))
    await client.connect()
    seen: list[Any] = []

    async def read() -> None:
        async for message in client.receive_messages():
            seen.append(message)
            if isinstance(message, ResultEvent) and len(_results(seen)) == 1:
                await client.query("second")
            elif isinstance(message, ResultEvent):
                await client.disconnect()

    await client.query("first")
    await asyncio.wait_for(read(), 20)
    assert [r.result for r in _results(seen)] == ["one", "two"]


def _results(events: list[Any]) -> list[ResultEvent]:
    return [e for e in events if isinstance(e, ResultEvent)]


async def test_max_turns_result_subtype(server: FakeServer, tmp_path: Path) -> None:
    server.set_script(
        [{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}, {"text": "never"}]
    )
    async with PeriClient(options_for(server, tmp_path, max_turns=1)) as client:
        await client.send("go")
        (result,) = _results([e async for e in client.events()])
    assert result.is_error and result.subtype == "error_max_turns"


WRITE = {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "new"}}]}


async def test_dont_ask_denies_without_asking_and_set_permission_mode_switches(
    server: FakeServer, tmp_path: Path
) -> None:
    asked: list[str] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        asked.append(name)
        return Allow()

    server.set_script([WRITE, {"text": "denied"}, WRITE, {"text": "written"}])
    options = options_for(server, tmp_path, can_use_tool=ask, permission_mode="dontAsk")
    target = tmp_path / "ws" / "a.txt"
    async with PeriClient(options) as client:
        assert client.mode == "default"
        await client.send("write it")
        (first,) = _results([e async for e in client.events()])
        assert not target.exists() and asked == []
        assert [d["tool_name"] for d in first.permission_denials] == ["Write"]
        await client.set_permission_mode("default")  # questions reach the callback again
        await client.send("write it again")
        [e async for e in client.events()]
        assert asked == ["Write"] and target.read_text() == "new"
        await client.set_permission_mode("acceptEdits")
        assert client.mode == "accept-edits"
        with pytest.raises(OptionError, match="auto"):
            await client.set_permission_mode("auto")


async def test_returning_at_the_result_frees_the_session_for_a_resume_at_once(
    server: FakeServer, tmp_path: Path
) -> None:
    """The usual loop returns from inside `async for ... in query(...)` at the result; the next
    `query` resuming that session must not find it locked by the first, still unclosed, client."""
    from peri_cli.sdk import query

    server.set_script([{"text": "Noted."}, {"text": "Still here."}])

    async def ask(prompt: str, **more: Any) -> ResultEvent:
        async for event in query(prompt, options_for(server, tmp_path, **more)):
            if isinstance(event, ResultEvent):
                return event
        raise AssertionError("no result")

    first = await ask("remember this")
    again = await ask("and now?", resume=first.session_id)
    assert (again.session_id, again.result) == (first.session_id, "Still here.")
    assert not again.is_error
