"""In-process MCP tools, as the Claude Agent SDK has them: `@tool(name, description, schema)`
makes an `SdkMcpTool`; `create_sdk_mcp_server(name, tools=[...])` the entry a program puts in
`PeriOptions(mcp_servers={"calc": server})`. Peri serves it with the `mcp` SDK's low-level
`Server` over in-memory streams (`mcp/inprocess.py`), so its tools are MCP tools like any other:
`mcp__calc__add`, deferred, permission-checked, in `get_mcp_status()`.

The server runs on the MCP manager's loop (its own thread); each call is sent to the loop of the
program's `PeriClient` (`on_loop`), so a tool function shares the program's loop and its state.
A function that raises, or returns something that is not a result, is an error result the model
reads; one that hangs is ended by the MCP call timeout (`MCP_TOOL_TIMEOUT`)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from peri_cli.sdk.errors import PeriError
from peri_cli.sdk.toolschema import json_schema

if TYPE_CHECKING:
    import mcp_types

ToolHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class SdkMcpTool:
    """One tool: its name, what the model reads, the schema as given (`json_schema` is it as
    JSON Schema) and the `async def handler(args) -> {"content": [...], "is_error"?}`."""

    name: str
    description: str
    input_schema: Any
    handler: ToolHandler
    annotations: Mapping[str, Any] | None = None  # MCP tool annotations (`readOnlyHint`, ...)
    json_schema: dict[str, Any] = field(default_factory=dict, repr=False)


def tool(
    name: str,
    description: str,
    input_schema: Any,
    annotations: Mapping[str, Any] | None = None,
) -> Callable[[ToolHandler], SdkMcpTool]:
    """Decorate `async def handler(args: dict) -> dict` as an in-process MCP tool. A bad name,
    schema or handler is a `PeriError` here, at decoration."""
    if not isinstance(name, str) or not name.strip():
        raise PeriError(f"@tool: the name must be a non-empty string, not {name!r}", 2)
    schema = json_schema(name, input_schema)

    def decorate(handler: ToolHandler) -> SdkMcpTool:
        if not inspect.iscoroutinefunction(handler):
            raise PeriError(f"@tool {name!r}: the handler must be an `async def` function", 2)
        return SdkMcpTool(name, str(description), input_schema, handler, annotations, schema)

    return decorate


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: Sequence[SdkMcpTool] | None = None
) -> dict[str, Any]:
    """The `mcp_servers` entry of an in-process server: `{"type": "sdk", "name", "instance"}`."""
    if not isinstance(name, str) or not name.strip():
        raise PeriError(
            f"create_sdk_mcp_server: the name must be a non-empty string, not {name!r}", 2
        )
    listed = list(tools or ())
    seen: set[str] = set()
    for item in listed:
        if not isinstance(item, SdkMcpTool):
            raise PeriError(
                f"create_sdk_mcp_server {name!r}: tools are made with @tool, "
                f"not {type(item).__name__}",
                2,
            )
        if item.name in seen:
            raise PeriError(f"create_sdk_mcp_server {name!r}: two tools named {item.name!r}", 2)
        seen.add(item.name)
    server = SdkMcpServer(name, str(version), tuple(listed))
    return {"type": "sdk", "name": name, "instance": server}


@dataclass(frozen=True)
class SdkMcpServer:
    """The tools of one in-process server, and the loop their functions run on (None: the
    loop that serves the call)."""

    name: str
    version: str
    tools: tuple[SdkMcpTool, ...]
    loop: asyncio.AbstractEventLoop | None = field(default=None, compare=False)

    def on_loop(self, loop: asyncio.AbstractEventLoop) -> SdkMcpServer:
        return replace(self, loop=loop)

    def lowlevel(self) -> Any:
        """The `mcp` SDK's low-level `Server` for these tools (`mcp/inprocess.py` calls it on
        the manager's thread, where the SDK is imported)."""
        import mcp_types as types
        from mcp.server import Server

        by_name = {t.name: t for t in self.tools}

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=[_listed(t) for t in self.tools])

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            found = by_name.get(params.name)
            if found is None:
                return _error(f"The server {self.name!r} has no tool {params.name!r}.")
            try:
                answer = await self._run(found, dict(params.arguments or {}))
            except Exception as e:  # the program's function failed: the model is told
                return _error(f"The tool {found.name} failed: {type(e).__name__}: {e}")
            return _result(found.name, answer)

        return Server(
            self.name, version=self.version, on_list_tools=list_tools, on_call_tool=call_tool
        )

    async def _run(self, found: SdkMcpTool, args: dict[str, Any]) -> Any:
        loop = self.loop
        if loop is None or loop is asyncio.get_running_loop():
            return await found.handler(args)
        future = asyncio.run_coroutine_threadsafe(_call(found.handler, args), loop)
        return await asyncio.wrap_future(future)  # a cancel (the call timed out) reaches it


async def _call(handler: ToolHandler, args: dict[str, Any]) -> Any:
    return await handler(args)


def on_running_loop(servers: Mapping[str, Any] | None) -> Any:
    """`PeriOptions.mcp_servers` with each in-process server set to run its tool functions on
    the running loop (the program's, which connects the client); other entries as they are.
    Outside a loop, each call runs on the loop that serves it."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return servers
    if not servers:
        return servers
    inner = servers.get("mcpServers", servers)
    bound = {
        name: {**entry, "instance": entry["instance"].on_loop(loop)}
        if isinstance(entry, Mapping) and isinstance(entry.get("instance"), SdkMcpServer)
        else entry
        for name, entry in inner.items()
    }
    return {"mcpServers": bound} if inner is not servers else bound


def _listed(found: SdkMcpTool) -> mcp_types.Tool:
    import mcp_types as types

    notes = types.ToolAnnotations.model_validate(dict(found.annotations or {}))
    return types.Tool(
        name=found.name,
        description=found.description,
        input_schema=found.json_schema,
        annotations=notes if found.annotations else None,
    )


def _result(name: str, answer: Any) -> mcp_types.CallToolResult:
    """The handler's `{"content": [...], "is_error"?: bool}` as an MCP result."""
    import mcp_types as types
    from pydantic import ValidationError

    content = answer.get("content") if isinstance(answer, Mapping) else None
    if not isinstance(content, list):
        return _error(
            f"The tool {name} returned {type(answer).__name__}, not a result "
            '({"content": [{"type": "text", "text": ...}]}): a bug in the program.'
        )
    is_error = bool(answer.get("is_error", answer.get("isError", False)))
    try:
        blocks = [_block(item) for item in content]
        return types.CallToolResult(content=blocks, is_error=is_error)
    except (ValidationError, TypeError, ValueError) as e:
        return _error(f"The tool {name} returned content MCP cannot carry: {e}")


def _block(item: Any) -> Any:
    import mcp_types as types

    if not isinstance(item, Mapping):
        raise TypeError(f"a content item is a dict, not {type(item).__name__}")
    if item.get("type") == "text":
        return types.TextContent(text=str(item.get("text", "")))
    if item.get("type") == "image":
        mime = item.get("mimeType", item.get("mime_type"))
        return types.ImageContent(data=str(item.get("data", "")), mime_type=str(mime))
    raise ValueError(f"content type {item.get('type')!r} (Peri carries text and image)")


def _error(text: str) -> mcp_types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
