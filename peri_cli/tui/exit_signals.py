"""SIGTERM and SIGHUP end the app the normal way, so the session is closed and no MCP server
outlives Peri (only the main thread's loop can take signals)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def install(on_signal: Callable[[int], None]) -> None:
    """Call `on_signal(signum)` on SIGTERM and SIGHUP (from the running loop)."""
    if threading.current_thread() is not threading.main_thread():
        return
    loop = asyncio.get_running_loop()
    for signum in SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, on_signal, signum)


def remove() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    with contextlib.suppress(RuntimeError):
        loop = asyncio.get_running_loop()
        for signum in SIGNALS:
            with contextlib.suppress(NotImplementedError, ValueError):
                loop.remove_signal_handler(signum)
