"""A stdio MCP server that hangs. With `connect` it never answers at all (nor reads its stdin, so
closing the pipe does not stop it); with `call` it connects, and its `wait` tool never returns."""

from __future__ import annotations

import sys
import time

from _pid import note_pid
from mcp.server.mcpserver import MCPServer

server = MCPServer("peri-test-hang")


@server.tool(description="Never returns.")
async def wait() -> str:
    import anyio

    await anyio.sleep_forever()
    return "unreachable"


if __name__ == "__main__":
    note_pid()
    if sys.argv[1:] == ["connect"]:
        while True:
            time.sleep(3600)
    server.run("stdio")
