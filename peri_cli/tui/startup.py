"""Where the app's runtime comes from: given, or built in a thread while the shell is already on
screen (building it imports the core and opens the session: most of start-up)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peri_cli.agent.host import SessionHost


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
        return await asyncio.to_thread(self._build_now)

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
