"""What the TUI's /mcp and headless stream-json show about each server, and the timeouts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from peri_cli.base.mcp_entry import Transport
from peri_cli.mcp.config import Scope

State = Literal["connecting", "connected", "failed", "stopped", "skipped"]

DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 600.0


@dataclass(frozen=True)
class Timeouts:
    connect: float = DEFAULT_CONNECT_TIMEOUT  # start, handshake and listing, per attempt
    call: float = DEFAULT_CALL_TIMEOUT  # one tool call or prompt


def timeouts_from_env(env: Mapping[str, str]) -> Timeouts:
    """Claude Code's variables, in milliseconds: `MCP_TIMEOUT` (connect), `MCP_TOOL_TIMEOUT`
    (one call). Anything but a positive number leaves the default."""
    return Timeouts(
        connect=_seconds(env.get("MCP_TIMEOUT"), DEFAULT_CONNECT_TIMEOUT),
        call=_seconds(env.get("MCP_TOOL_TIMEOUT"), DEFAULT_CALL_TIMEOUT),
    )


def _seconds(ms: str | None, default: float) -> float:
    try:
        value = float(ms or "")
    except ValueError:
        return default
    return value / 1000 if value > 0 and value != float("inf") else default


@dataclass(frozen=True)
class ServerStatus:
    """One server now. `detail` is one line, already safe to show (control characters visible);
    it never holds header values or environment values."""

    name: str
    scope: Scope
    transport: Transport
    state: State
    detail: str
    tools: int = 0
    prompts: int = 0

    def line(self) -> str:
        return f"{self.name} ({self.scope}, {self.transport}): {self.state} — {self.detail}"

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "scope": self.scope,
            "transport": self.transport,
            "status": self.state,
            "detail": self.detail,
            "tools": self.tools,
            "prompts": self.prompts,
        }


# Peri's states as the Claude Agent SDK's `McpServerConnectionStatus` names them.
SDK_STATUS = {
    "connecting": "pending",
    "connected": "connected",
    "failed": "failed",
    "stopped": "failed",
    "skipped": "disabled",
}


def sdk_status(status: ServerStatus, tools: list[tuple[str, str]]) -> dict[str, object]:
    """One entry of `get_mcp_status()["mcpServers"]`, in the Claude Agent SDK's shape: `name`,
    `status` (pending, connected, failed, disabled), `scope`, `transport`, `tools` (each
    `{"name", "description"}` as the server names it), `error` when it is not connected, and
    Peri's own `detail` line."""
    entry: dict[str, object] = {
        "name": status.name,
        "status": SDK_STATUS[status.state],
        "scope": status.scope,
        "transport": status.transport,
        "tools": [{"name": n, "description": d} for n, d in tools],
        "detail": status.detail,
    }
    if status.state in ("failed", "stopped", "skipped"):
        entry["error"] = status.detail
    return entry
