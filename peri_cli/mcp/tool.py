"""One server tool behind the Tool port: `mcp__<server>__<tool>`, external, writes unknown."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from peri_cli.base.provider import ToolSpec
from peri_cli.base.textsafe import visible
from peri_cli.base.tool import (
    ANYTHING,
    NO_READS,
    Reads,
    ToolContext,
    ToolError,
    ToolKind,
    ToolOutput,
    ToolTraits,
    Writes,
)
from peri_cli.context.tokens import default_counter
from peri_cli.mcp.config import ServerConfig
from peri_cli.mcp.names import tool_name
from peri_cli.mcp.results import to_output
from peri_cli.mcp.schema import Check

MAX_DESCRIPTION = 2048

# Runs the call on the server's connection: (server, tool as the server names it, arguments).
Caller = Callable[[str, str, dict[str, Any]], Awaitable[Any]]


class McpTool:
    """A server's tool as the model sees it. Everything in it came from the server and is
    untrusted text: shown only through `textsafe.visible`, validated before every call."""

    kind: ToolKind = "external"

    def __init__(
        self,
        *,
        server: str,
        remote_name: str,
        description: str,
        input_schema: dict[str, Any],
        check: Check,
        always_load: bool,
        caller: Caller,
    ) -> None:
        self.name = tool_name(server, remote_name)
        self.server = server
        self.remote_name = remote_name
        self.always_load = always_load
        # The `mcp` capability; deferred (found through SearchExtraTools) unless `alwaysLoad`.
        self.traits = ToolTraits("mcp", deferred=not always_load)
        self._description = _cap(description or f"{remote_name} (from the MCP server {server})")
        self._schema = input_schema
        self._check = check
        self._caller = caller

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self._description, input_schema=self._schema)

    def validate(self, raw: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise ToolError(f"Invalid input for {self.name}: send a JSON object.")
        problem = self._check(raw)
        if problem:
            raise ToolError(
                f"Invalid input for {self.name}: {problem}. Fix the arguments to match the "
                "tool's input schema and retry."
            )
        return raw

    def reads(self, params: dict[str, Any], ctx: ToolContext) -> Reads:
        """Unknown to Peri: the server reads what it reads, as itself (not through Peri)."""
        return NO_READS

    def writes(self, params: dict[str, Any], ctx: ToolContext) -> Writes:
        """Unknown: an MCP call never runs beside another call that writes."""
        return ANYTHING

    def subject(self, params: dict[str, Any]) -> str | None:
        return None

    async def call(self, params: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        result = await self._caller(self.server, self.remote_name, params)
        return to_output(
            result, tool=self.name, session_dir=ctx.session_dir, counter=default_counter()
        )


def _cap(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def wrap_tools(
    config: ServerConfig,
    tools: list[Any],
    *,
    caller: Caller,
    warn: Callable[[str], None],
) -> list[McpTool]:
    """A server's listed tools (the SDK's objects) as McpTools: a tool whose schema is unusable
    or whose name is taken is skipped, with a warning."""
    from peri_cli.mcp.schema import SchemaProblem, compile_check, normalize_schema

    wrapped: dict[str, McpTool] = {}
    for tool in tools:
        try:
            schema = normalize_schema(tool.input_schema)
        except SchemaProblem as e:
            warn(f"tool {visible(tool.name)!r} skipped: {e}")
            continue
        check, note = compile_check(schema)
        if note:
            warn(f"tool {visible(tool.name)!r}: {note}")
        item = McpTool(
            server=config.name,
            remote_name=tool.name,
            description=tool.description or "",
            input_schema=schema,
            check=check,
            always_load=config.always_load,
            caller=caller,
        )
        if item.name in wrapped:
            warn(f"tool {visible(tool.name)!r} skipped: its name is taken")
            continue
        wrapped[item.name] = item
    return list(wrapped.values())
