"""A streamable-HTTP (or, with --sse, legacy SSE) MCP server built on the `mcp` SDK, for tests.

Binds 127.0.0.1 on a free port and prints `URL <url>` once it listens. Tools: `echo`, `add`,
`fail` (an isError result), `big` (a result of N characters), `secret_header` (the value of a
request header, to prove configured headers arrive). Prompt: `review`.
"""

from __future__ import annotations

import argparse
import socket
import sys

import anyio
import uvicorn
from _pid import note_pid
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("peri-test-http")


@server.tool(description="Echo the text back, unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers and return the sum.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Always fails with a message.")
def fail(reason: str = "it broke") -> str:
    raise ValueError(reason)


@server.tool(description="Return a text of `size` characters, lines of x.")
def big(size: int) -> str:
    line = "x" * 99 + "\n"
    return (line * (size // 100 + 1))[:size]


@server.tool(description="The value of the X-Peri-Test request header.")
def secret_header(ctx: Context) -> str:
    request = ctx.request_context.request
    headers = getattr(request, "headers", None) or {}
    return str(headers.get("x-peri-test", "<none>"))


@server.prompt(description="Ask for a review of one file.")
def review(path: str, focus: str = "bugs") -> str:
    return f"Please review {path}, looking for {focus}."


async def serve(sse: bool) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = server.sse_app() if sse else server.streamable_http_app()
    path = "/sse" if sse else "/mcp"
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    print(f"URL http://127.0.0.1:{port}{path}", flush=True)
    await uv.serve(sockets=[sock])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sse", action="store_true")
    args = ap.parse_args()
    note_pid()
    anyio.run(serve, args.sse)
    sys.exit(0)


if __name__ == "__main__":
    main()
