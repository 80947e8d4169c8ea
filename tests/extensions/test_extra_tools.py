"""Deferred tools: ranking, the search result, and ExecuteExtraTool decided on its target."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from pydantic import BaseModel

from peri_cli.base.events import PermissionRequested, ToolFinished
from peri_cli.base.provider import ToolSpec
from peri_cli.base.tool import ANYTHING, PydanticTool, ToolContext, ToolOutput, ToolRegistry
from peri_cli.extensions.extra_tools import (
    ExecuteExtraTool,
    SearchExtraTools,
    SearchParams,
    offer_extra_tools,
    rank,
    words,
)
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from tests.agent.test_loop import make_agent


def spec(name: str, description: str) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema={"type": "object"})


def test_words_split_names_the_ways_tools_are_named() -> None:
    assert words("mcp__github__createPullRequest") == ["mcp", "github", "create", "pull", "request"]
    assert words("get_current_time") == ["get", "current", "time"]
    assert words("HTTPServerStatus") == ["http", "server", "status"]


def test_rank_prefers_name_matches_and_exact_names() -> None:
    specs = [
        spec("mcp__time__get_current_time", "Get the current time in a timezone"),
        spec("mcp__time__convert_time", "Convert a time between timezones"),
        spec("mcp__github__create_issue", "Create an issue; mentions the time it was opened"),
        spec("mcp__fs__read_file", "Read a file"),
    ]
    names = [s.name for s in rank("current time", specs)]
    assert names[0] == "mcp__time__get_current_time"
    assert "mcp__fs__read_file" not in names
    assert rank("github", specs)[0].name == "mcp__github__create_issue"
    assert rank("mcp__time__convert_time", specs)[0].name == "mcp__time__convert_time"
    assert rank("zzz", specs) == []
    many = [spec(f"t{i}_time", "time") for i in range(20)]
    assert len(rank("time", many)) == 5


class _NoteParams(BaseModel):
    path: str
    text: str


class _Note(PydanticTool[_NoteParams]):
    """A deferred tool that writes a file (so it asks permission outside bypass)."""

    name = "mcp__notes__write_note"
    kind = "external"
    params = _NoteParams

    def description(self) -> str:
        return "Write a note into a file of the workspace"

    def writes(self, params: _NoteParams, ctx: ToolContext):  # type: ignore[no-untyped-def]
        return ANYTHING

    async def call(self, params: _NoteParams, ctx: ToolContext) -> ToolOutput:
        (ctx.workspace / params.path).write_text(params.text)
        return ToolOutput.text("noted")


def _agent(tmp_path: Path, replies, mode: str = "default"):  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    agent, provider = make_agent(ws, replies, mode=mode)
    agent.tools.add(_Note(), deferred=True)
    offer_extra_tools(agent.tools)
    return agent, provider, ws


async def test_the_wrappers_are_direct_and_the_deferred_tool_is_not(tmp_path: Path) -> None:
    agent, provider, _ = _agent(tmp_path, [ScriptedReply(text="hi")])
    async for _ in agent.run("hi"):
        pass
    sent = [t.name for t in provider.requests[0].tools]
    assert "SearchExtraTools" in sent and "ExecuteExtraTool" in sent
    assert "mcp__notes__write_note" not in sent


def test_no_wrappers_without_deferred_tools() -> None:
    registry = ToolRegistry()
    offer_extra_tools(registry)
    assert not registry.direct


async def test_search_finds_a_deferred_tool_with_its_schema(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.add(_Note(), deferred=True)
    ctx = ToolContext(workspace=tmp_path, session_dir=tmp_path)
    out = await SearchExtraTools(registry).call(SearchParams(query="write a note"), ctx)
    text = out.content[0].text  # type: ignore[union-attr]
    assert "mcp__notes__write_note" in text and '"required": ["path", "text"]' in text
    assert "search again" in text


@pytest.mark.parametrize(
    ("mode", "answer", "ran"),
    [
        ("default", "deny", False),
        ("default", "allow", True),
        ("plan", None, False),
        ("bypass", None, True),
    ],
)
async def test_execute_is_decided_on_the_target(
    tmp_path: Path, mode: str, answer: str | None, ran: bool
) -> None:
    call = ScriptedCall(
        "ExecuteExtraTool",
        {"tool_name": "mcp__notes__write_note", "params": {"path": "n.txt", "text": "hi"}},
    )
    agent, _, ws = _agent(tmp_path, [ScriptedReply(tool_calls=[call]), ScriptedReply()], mode)
    asked: list[PermissionRequested] = []
    finished: list[ToolFinished] = []
    async for event in agent.run("note it"):
        if isinstance(event, PermissionRequested):
            asked.append(event)
            event.future.set_result(answer)  # type: ignore[arg-type]
        elif isinstance(event, ToolFinished):
            finished.append(event)
    assert (ws / "n.txt").exists() is ran
    if answer is not None:
        (request,) = asked
        assert request.tool == "mcp__notes__write_note" and request.input["path"] == "n.txt"
    else:
        assert not asked
    if not ran:
        assert finished[0].is_error and "mcp__notes__write_note" in finished[0].output
        assert agent.denials[0].tool_name == "mcp__notes__write_note"


async def test_execute_validates_against_the_target_schema(tmp_path: Path) -> None:
    call = ScriptedCall(
        "ExecuteExtraTool", {"tool_name": "mcp__notes__write_note", "params": {"path": "n.txt"}}
    )
    agent, _, _ = _agent(tmp_path, [ScriptedReply(tool_calls=[call]), ScriptedReply()], "bypass")
    events = [e async for e in agent.run("note")]
    (done,) = [e for e in events if isinstance(e, ToolFinished)]
    assert done.is_error and "text" in done.output and "Invalid input" in done.output


class _SlowServer:
    """A tool source that connects after a moment and then brings one tool."""

    name = "notes"
    tool_prefix = "mcp__notes__"

    def __init__(self, registry: ToolRegistry, delay: float) -> None:
        self._registry = registry
        self._ready = asyncio.Event()
        self._delay = delay

    def start(self) -> None:
        asyncio.get_running_loop().call_later(self._delay, self._connect)

    def _connect(self) -> None:
        self._registry.add(_Note(), deferred=True)
        self._ready.set()

    def is_pending(self) -> bool:
        return not self._ready.is_set()

    async def wait(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)


async def test_execute_waits_for_a_server_still_connecting(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    call = ScriptedCall(
        "ExecuteExtraTool",
        {"tool_name": "mcp__notes__write_note", "params": {"path": "n.txt", "text": "late"}},
    )
    agent, _ = make_agent(ws, [ScriptedReply(tool_calls=[call]), ScriptedReply()], mode="bypass")
    server = _SlowServer(agent.tools, delay=0.2)
    agent.tools.add_source(server)
    offer_extra_tools(agent.tools)
    server.start()
    events = [e async for e in agent.run("note")]
    (done,) = [e for e in events if isinstance(e, ToolFinished)]
    assert not done.is_error, done.output
    assert (ws / "n.txt").read_text() == "late"


async def test_execute_cannot_wrap_itself(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.add(_Note(), deferred=True)
    offer_extra_tools(registry)
    wrapper = registry.get("ExecuteExtraTool")
    assert isinstance(wrapper, ExecuteExtraTool)
    with pytest.raises(Exception, match="cannot run"):
        await wrapper.unwrap({"tool_name": "ExecuteExtraTool", "params": {}})
