"""Where the app's runtime comes from: given, or built in a thread while the shell is already on
screen (building it imports the core and opens the session: most of start-up)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peri_cli.agent.host import SessionHost

BUILD_SWITCH_INTERVAL = 0.0005  # seconds: the GIL's hand-over while the runtime is built
BUILD_GAP = 0.1  # seconds without a key press before the runtime's build starts...
BUILD_LATEST = 0.5  # ...but no later than this after the first frame


class RuntimeSlot:
    """Holds the runtime once it exists, and closes it exactly once: on `release()`, or right
    after it is built if the app was released (quit) while it was being built."""

    def __init__(self, runtime: SessionHost | Callable[[], SessionHost]) -> None:
        self._build: Callable[[], SessionHost] | None = runtime if callable(runtime) else None
        self.runtime: SessionHost | None = None if callable(runtime) else runtime
        self._lock = threading.Lock()
        self._released = False

    @property
    def pending(self) -> bool:
        """There is a runtime to build."""
        return self.runtime is None and self._build is not None

    async def build(self) -> SessionHost:
        """Build it in a thread (errors such as `StartupError` propagate)."""
        # The build (imports, pydantic models, file reads) holds the GIL in long stretches; at
        # the default 5 ms switch interval each key the UI thread handles meanwhile waits up to
        # that long at every wake-up. A short interval keeps the keys echoing while it runs.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(BUILD_SWITCH_INTERVAL)
        try:
            return await asyncio.to_thread(self._build_now)
        finally:
            sys.setswitchinterval(interval)

    def _build_now(self) -> SessionHost:
        assert self._build is not None
        runtime = self._build()
        with self._lock:
            late = self._released
            if not late:
                self.runtime = runtime
        if late:  # the app ended while this was being built: nobody else will close it
            runtime.close()
        return runtime

    def release(self) -> None:
        with self._lock:
            self._released = True
            runtime, self.runtime = self.runtime, None
        if runtime is not None:
            runtime.close()


class QuietStart:
    """Starts the runtime's build in the first gap in the typing after the first frame, and no
    later than `latest` after it.

    The build (~330 ms: importing the core, pydantic's schemas, reading the files) holds the GIL
    in stretches a key press cannot interrupt (a long C call ignores the switch interval): the
    first keys typed while it runs echo late. Typed before it starts, they echo at Textual's own
    pace; a prompt sent meanwhile waits for the build as it would anyway."""

    def __init__(
        self, start: Callable[[], object], *, gap: float = BUILD_GAP, latest: float = BUILD_LATEST
    ) -> None:
        self._start = start
        self._gap = gap
        self._latest = latest
        self._handle: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        """The first frame is drawn: start after a gap."""
        loop = asyncio.get_running_loop()
        self._latest += loop.time()
        self._handle = loop.call_later(self._gap, self._fire)

    def typed(self) -> None:
        """A key was pressed: wait for the next gap (not past the latest start)."""
        if self._handle is None:
            return
        loop = asyncio.get_running_loop()
        self._handle.cancel()
        self._handle = loop.call_at(min(loop.time() + self._gap, self._latest), self._fire)

    def _fire(self) -> None:
        self._handle = None
        self._start()
