"""A stdio MCP server (the `mcp` SDK's MCPServer, once FastMCP) that takes its time to start:
it sleeps `SECONDS` (default 2) before it reads its first message, then serves `echo`."""

from __future__ import annotations

import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("peri-test-slow")


@server.tool(description="Says the text back.")
def echo(text: str) -> str:
    return f"slow server says {text}"


if __name__ == "__main__":
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
    server.run("stdio")
