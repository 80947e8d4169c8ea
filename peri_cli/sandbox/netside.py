"""One session's way out to the network: its domain proxy on a private Unix socket.

The socket is bound and listening as soon as the sandbox is built (bubblewrap binds it into each
command), while the proxy serves it on the event loop that runs the commands: from the first
sandboxed command on (`serve`, called as a command starts). A connection made meanwhile waits in
the socket's backlog. `close` ends it with the session, from any thread."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from peri_cli.sandbox.gate import Ask, DomainGate, Remember
from peri_cli.sandbox.proxy import DomainProxy, listen

SOCKET_NAME = "proxy.sock"


class SessionNetwork:
    """The gate (settings' domains, then the user's answers) and the proxy it guards."""

    def __init__(
        self,
        socket_path: Path,
        allowed: Iterable[str],
        denied: Iterable[str],
        *,
        ask: Ask | None,
        remember: Remember | None,
        on_note: Callable[[str], None] | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.gate = DomainGate(allowed, denied, ask=ask, remember=remember, on_note=on_note)
        self.proxy = DomainProxy(self.gate, socket_path)
        self._sock = listen(socket_path)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def serve(self) -> None:
        """Start serving on the running event loop, once (a no-op without one, or after
        close)."""
        if self._loop is not None or self._closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._loop, self._thread = loop, threading.get_ident()
        self._task = loop.create_task(self.proxy.start(self._sock))

    def close(self) -> None:
        """Stop serving and remove the socket; on the proxy's loop when it still runs."""
        if self._closed:
            return
        self._closed = True
        loop = self._loop
        if loop is None or loop.is_closed():
            self._shut()
        elif loop.is_running() and threading.get_ident() != self._thread:
            with contextlib.suppress(RuntimeError):  # (closed meanwhile)
                loop.call_soon_threadsafe(self._shut)
        else:
            self._shut()
        self.socket_path.unlink(missing_ok=True)

    def _shut(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self.proxy.shut()
        self._sock.close()
