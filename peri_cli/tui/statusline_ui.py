"""Drives the status line under the prompt: its command runs again after each change of what
the status bar shows (a message's usage, a turn starting or ending, the mode, the model, a
session shown), at most every 300 ms and one run at a time, in a worker on the app's loop (the
command is an asyncio subprocess: the UI never waits for it). Its output is drawn by
`widgets/status_line`: SGR colours kept, every other control sequence made visible."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.timer import Timer

    from peri_cli.extensions.statusline import StatusLineShown
    from peri_cli.tui.ports import AppPort

MIN_INTERVAL = 0.3  # seconds between the starts of two runs (Claude Code's)


class StatusLineUI:
    def __init__(self, app: AppPort) -> None:
        self.app = app
        self._running = False
        self._again = False  # something changed while a run was under way
        self._timer: Timer | None = None
        self._last = -math.inf  # when the last run started (monotonic)
        self._since = time.monotonic()  # when the session shown was shown

    def follow(self) -> None:
        """A session is shown (started, resumed, forked): run for it from now on."""
        self._since = time.monotonic()
        self.app.status.when_set = self.changed
        self.changed()

    def changed(self) -> None:
        """What the status line reads may have changed: run now, or once the interval is up."""
        if self.app.runtime.status_line_command is None:
            self.app.prompt_area.status_line.show_line(None)
            return
        if self._running:
            self._again = True
            return
        if self._timer is not None:
            return  # a run is already due
        wait = self._last + MIN_INTERVAL - time.monotonic()
        if wait > 0:
            self._timer = self.app.set_timer(wait, self._start)
        else:
            self._start()

    def _start(self) -> None:
        self._timer = None
        if self.app.quitting:
            return
        self._running = True
        self._last = time.monotonic()
        self.app.run_worker(self._run(), group="status-line")

    async def _run(self) -> None:
        from peri_cli.extensions.statusline import StatusLineShown

        try:
            try:
                status = self.app.status.status
                shown = await self.app.runtime.run_status_line(
                    cost_usd=status.cost_usd,
                    context_tokens=status.context_tokens,
                    duration_ms=int((time.monotonic() - self._since) * 1000),
                )
            except Exception as e:  # a worker's error ends the app: the line is not worth it
                shown = StatusLineShown(note=f"status line failed: {type(e).__name__}")
            self._draw(shown)
        finally:
            self._running = False
            if self._again and not self.app.quitting:
                self._again = False
                self.changed()

    def _draw(self, shown: StatusLineShown) -> None:
        from rich.text import Text

        from peri_cli.tui.ansi_line import ansi_text

        view = self.app.prompt_area.status_line
        padding = self.app.runtime.settings.statusLine.padding
        if shown.text is not None:
            view.show_line(ansi_text(shown.text), padding=padding)
        elif shown.note is not None:
            view.show_line(Text(shown.note, no_wrap=True, overflow="ellipsis"), note=True)
        else:
            view.show_line(None)
