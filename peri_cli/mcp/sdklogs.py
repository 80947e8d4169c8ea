"""Where the MCP SDK's own log records go: a file under the run's log folder, or nowhere, never
the terminal the TUI draws on (the SDK logs tracebacks for a server's garbage output)."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

SDK_LOGGERS = ("mcp", "mcp_types", "httpx2", "httpcore2", "sse_starlette")


def quiet_sdk_logs(log_dir: Path | None) -> None:
    """The SDK logs tracebacks for a server's garbage output; they go to a file (or nowhere),
    never to the terminal the TUI draws on."""
    handler: logging.Handler = logging.NullHandler()
    if log_dir is not None:
        with contextlib.suppress(OSError):
            log_dir.mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(log_dir / "mcp.log", encoding="utf-8", delay=True)
            form = "%(asctime)s %(name)s %(levelname)s: %(message)s"
            handler.setFormatter(logging.Formatter(form))
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        if not logger.handlers:
            logger.addHandler(handler)
