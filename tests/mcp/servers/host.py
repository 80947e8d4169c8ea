"""A program that uses the manager and ends badly, for the no-orphans tests: it starts servers,
prints `ready` once one is connected and, after a line on stdin, ends as argv[1] says: `exit`
(returns without closing the manager), `raise` (an uncaught exception), `wait` (until Ctrl+C)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from peri_cli.mcp.config import ServerConfig
from peri_cli.mcp.manager import McpManager

HERE = Path(__file__).parent


def server(name: str, *args: str) -> ServerConfig:
    return ServerConfig(
        name=name, scope="user", source=HERE, transport="stdio", command=sys.executable, args=args
    )


def main() -> None:
    manager = McpManager(
        [
            server("a", str(HERE / "crash_server.py")),
            server("b", str(HERE / "hang_server.py"), "connect"),
        ]
    )
    manager.start()
    while manager.is_pending("a"):
        time.sleep(0.02)
    print("ready", flush=True)
    sys.stdin.readline()
    if sys.argv[1] == "raise":
        raise RuntimeError("the host failed")
    if sys.argv[1] == "wait":
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
