"""A stdio MCP server (on the `mcp` SDK) whose `crash` tool kills the process mid-call; `getenv`
shows what environment a stdio server is started with."""

from __future__ import annotations

import os

from _pid import note_pid
from mcp.server.mcpserver import MCPServer

server = MCPServer("peri-test-crash")


@server.tool(description="Answer `ok`.")
def ping() -> str:
    return "ok"


@server.tool(description="The value of an environment variable, or <unset>.")
def getenv(name: str) -> str:
    return os.environ.get(name, "<unset>")


@server.tool(description="Die in the middle of the call.")
def crash() -> str:
    os._exit(3)


if __name__ == "__main__":
    note_pid()
    server.run("stdio")
