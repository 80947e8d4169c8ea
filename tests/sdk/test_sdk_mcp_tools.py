"""In-process MCP tools (`@tool`, `create_sdk_mcp_server`), as the Claude Agent SDK has them: the
schema's three forms, and tools that are MCP tools like any other (deferred, permission-checked,
in `get_mcp_status()`) whose functions run on the program's own event loop (issue 40)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import pytest

from peri_cli.sdk import (
    Allow,
    PeriClient,
    PeriError,
    PermissionContext,
    ResultEvent,
    SdkMcpTool,
    create_sdk_mcp_server,
    tool,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for

# schemas (pure)


class Point(TypedDict):
    x: int
    y: float
    label: NotRequired[str]


class Loose(TypedDict, total=False):
    tags: list[str]
    where: Point


async def _nothing(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


def test_a_dict_of_types_is_an_object_with_every_argument_required() -> None:
    made = tool("add", "Add", {"a": int, "b": float, "s": str, "ok": bool, "l": list, "d": dict})(
        _nothing
    )
    assert isinstance(made, SdkMcpTool) and made.handler is _nothing
    assert made.json_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "number"},
            "s": {"type": "string"},
            "ok": {"type": "boolean"},
            "l": {"type": "array"},
            "d": {"type": "object"},
        },
        "required": ["a", "b", "s", "ok", "l", "d"],
    }


def test_a_typed_dict_leaves_its_not_required_keys_optional() -> None:
    assert tool("p", "P", Point)(_nothing).json_schema == {
        "type": "object",
        "properties": {
            "x": {"type": "integer"},
            "y": {"type": "number"},
            "label": {"type": "string"},
        },
        "required": ["x", "y"],
    }
    loose = tool("l", "L", Loose)(_nothing).json_schema
    assert loose["required"] == []
    assert loose["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert loose["properties"]["where"]["required"] == ["x", "y"]


def test_a_json_schema_passes_through() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "what to find"}},
        "required": ["q"],
    }
    assert tool("find", "Find", schema)(_nothing).json_schema == schema
    bare = {"properties": {"n": {"type": "integer"}}}
    assert tool("n", "N", bare)(_nothing).json_schema == {"type": "object", **bare}


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"a": object()}, "argument 'a'"),
        ({"a": object}, "argument 'a': object is not a type"),
        ({"type": "object", "properties": {"a": {"default": object()}}}, "not JSON"),
        ({"type": "string"}, "must describe an object"),
        ("a: int", "not str"),
    ],
)
def test_a_schema_peri_cannot_read_is_refused_at_decoration(schema: Any, words: str) -> None:
    with pytest.raises(PeriError, match="@tool 'bad'") as caught:
        tool("bad", "Bad", schema)
    assert words in str(caught.value) and caught.value.exit_code == 2


def test_a_server_is_refused_tools_that_were_not_made_with_tool() -> None:
    add = tool("add", "Add", {"a": int})(_nothing)
    with pytest.raises(PeriError, match="two tools named 'add'"):
        create_sdk_mcp_server("calc", tools=[add, add])
    with pytest.raises(PeriError, match="made with @tool"):
        create_sdk_mcp_server("calc", tools=[_nothing])  # type: ignore[list-item]
    with pytest.raises(PeriError, match="async def"):
        tool("sync", "Sync", {})(lambda args: {})  # type: ignore[arg-type,return-value]
    entry = create_sdk_mcp_server("calc", tools=[add])
    assert (entry["type"], entry["name"]) == ("sdk", "calc")


# end to end, against the fake server

SEARCH = {"tool_calls": [{"name": "SearchExtraTools", "input": {"query": "add numbers"}}]}


def execute(name: str, params: dict[str, Any]) -> dict[str, Any]:
    call = {"name": "ExecuteExtraTool", "input": {"tool_name": name, "params": params}}
    return {"tool_calls": [call]}


def tool_results(body: dict[str, Any]) -> list[str]:
    return [
        json.dumps(b.get("content"))
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


class Calc:
    """The program's state: the loop each call ran on."""

    def __init__(self) -> None:
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.calls = 0

    def server(self) -> dict[str, Any]:
        @tool("add", "Add two numbers", {"a": float, "b": float})
        async def add(args: dict[str, Any]) -> dict[str, Any]:
            self.loops.append(asyncio.get_running_loop())
            self.calls += 1
            return {"content": [{"type": "text", "text": f"sum is {args['a'] + args['b']:g}"}]}

        @tool("boom", "Always fails", {})
        async def boom(args: dict[str, Any]) -> dict[str, Any]:
            self.calls += 1
            raise ValueError("the abacus broke")

        return create_sdk_mcp_server("calc", tools=[add, boom])


async def _run(client: PeriClient, prompt: str) -> ResultEvent:
    await client.send(prompt)
    events = [e async for e in client.events()]
    result = events[-1]
    assert isinstance(result, ResultEvent), events
    return result


async def test_the_model_finds_the_tool_and_its_function_runs_on_the_programs_loop(
    server: FakeServer, tmp_path: Path
) -> None:
    calc = Calc()
    server.set_script([SEARCH, execute("mcp__calc__add", {"a": 2, "b": 3.5}), {"text": "5.5"}])
    options = options_for(
        server, tmp_path, mcp_servers={"calc": calc.server()}, allowed_tools=["mcp__calc__add"]
    )
    async with PeriClient(options) as client:
        result = await _run(client, "add 2 and 3.5")
        status = await client.get_mcp_status()
    assert not result.is_error, result
    calls = model_calls(server)
    assert "mcp__calc__add" in tool_results(calls[1])[-1]  # the search found it
    assert "sum is 5.5" in tool_results(calls[2])[-1]
    assert calc.loops == [asyncio.get_running_loop()]
    (entry,) = status["mcpServers"]
    assert (entry["name"], entry["status"], entry["transport"]) == ("calc", "connected", "sdk")
    assert [t["name"] for t in entry["tools"]] == ["add", "boom"]


async def test_a_function_that_raises_is_an_error_the_model_reads_and_the_session_goes_on(
    server: FakeServer, tmp_path: Path
) -> None:
    calc = Calc()
    server.set_script(
        [
            execute("mcp__calc__boom", {}),
            {"text": "it broke"},
            execute("mcp__calc__add", {"a": 1, "b": 1}),
            {"text": "2"},
        ]
    )
    options = options_for(server, tmp_path, mcp_servers={"calc": calc.server()})
    options.allowed_tools = ["mcp__calc__boom", "mcp__calc__add"]
    async with PeriClient(options) as client:
        first = await _run(client, "break it")
        second = await _run(client, "then add")
    assert not first.is_error and not second.is_error
    calls = model_calls(server)
    broke = tool_results(calls[1])[-1]
    assert "ValueError: the abacus broke" in broke, broke
    assert '"is_error": true' in json.dumps(calls[1]["messages"][-1]), calls[1]["messages"][-1]
    assert "sum is 2" in tool_results(calls[3])[-1]
    assert calc.calls == 2


async def test_a_call_no_rule_allows_is_not_run_and_the_model_is_told(
    server: FakeServer, tmp_path: Path
) -> None:
    calc = Calc()
    server.set_script([execute("mcp__calc__add", {"a": 1, "b": 2}), {"text": "denied"}])
    options = options_for(server, tmp_path, mcp_servers={"calc": calc.server()})
    async with PeriClient(options) as client:
        result = await _run(client, "add")
    assert not result.is_error
    assert calc.calls == 0
    told = tool_results(model_calls(server)[1])[-1]
    assert "Permission denied for mcp__calc__add" in told and "sum is" not in told, told


async def test_the_permission_callback_is_asked_about_the_tool_by_its_mcp_name(
    server: FakeServer, tmp_path: Path
) -> None:
    calc = Calc()
    asked: list[tuple[str, dict[str, Any]]] = []

    async def ask(name: str, params: dict[str, Any], context: PermissionContext) -> Allow:
        asked.append((name, params))
        return Allow()

    server.set_script([execute("mcp__calc__add", {"a": 1, "b": 2}), {"text": "3"}])
    options = options_for(server, tmp_path, mcp_servers={"calc": calc.server()}, can_use_tool=ask)
    async with PeriClient(options) as client:
        await _run(client, "add")
    assert asked == [("mcp__calc__add", {"a": 1, "b": 2})]
    assert calc.calls == 1 and "sum is 3" in tool_results(model_calls(server)[1])[-1]


async def test_a_function_that_hangs_ends_at_the_mcp_call_timeout(
    server: FakeServer, tmp_path: Path
) -> None:
    ended = asyncio.Event()

    @tool("wait", "Never returns", {})
    async def wait(args: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.sleep(3600)
        finally:
            ended.set()
        return {"content": []}

    server.set_script([execute("mcp__slow__wait", {}), {"text": "gave up"}])
    options = options_for(
        server,
        tmp_path,
        mcp_servers={"slow": create_sdk_mcp_server("slow", tools=[wait])},
        allowed_tools=["mcp__slow__wait"],
    )
    options.env = {**options.env, "MCP_TOOL_TIMEOUT": "500"}
    async with PeriClient(options) as client:
        result = await asyncio.wait_for(_run(client, "wait"), 30)
        await asyncio.wait_for(ended.wait(), 10)  # cancelled, not left running on the loop
    assert not result.is_error
    told = tool_results(model_calls(server)[1])[-1]
    assert "did not answer within 0.5 s" in told, told
