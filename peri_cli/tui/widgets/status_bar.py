"""One line under the prompt: model, provider, mode, context use, cache share, cost, activity."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from textual.timer import Timer
from textual.widgets import Static

from peri_cli.tui.format import cost, elapsed, markup, tokens

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
MODE_COLORS = {
    "default": "$text-muted",
    "accept-edits": "$success",
    "plan": "$accent",
    "bypass": "$error",
}


@dataclass(frozen=True)
class Status:
    model: str = ""
    provider: str = ""
    mode: str = "default"
    context_tokens: int | None = None
    context_estimated: bool = False
    window: int = 0
    cache_share: float | None = None
    cost_usd: float | None = 0.0
    activity: str = ""  # what is running now; empty when idle
    busy_since: float | None = None


def render_status(s: Status, now: float) -> str:
    if not s.model and s.busy_since is not None:  # starting: nothing known yet but that
        return _activity(s, now)
    parts = [f"[b]{markup(s.model)}[/b]", markup(s.provider)]
    parts.append(f"[{MODE_COLORS.get(s.mode, '$text')}]{markup(s.mode)}[/]")
    if s.window:
        pct = (s.context_tokens or 0) / s.window
        color = "$error" if pct >= 0.9 else "$warning" if pct >= 0.75 else "$text"
        approx = "~" if s.context_estimated else ""
        used = f"{approx}{tokens(s.context_tokens)}/{tokens(s.window)}"
        parts.append(f"ctx [{color}]{approx}{pct:.0%}[/] {used}")
    if s.cache_share is not None:
        parts.append(f"cache {s.cache_share:.0%}")
    parts.append(cost(s.cost_usd))
    line = " · ".join(parts)
    if s.busy_since is not None:
        line = _activity(s, now) + "  " + line
    return line


def _activity(s: Status, now: float) -> str:
    spent = now - (s.busy_since or now)
    frame = SPINNER[int(spent * 10) % len(SPINNER)]
    return f"[$accent]{frame} {markup(s.activity or 'working')} {elapsed(spent)}[/]"


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    def __init__(self, clock: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.status = Status()
        self._timer: Timer | None = None

    def render(self) -> str:
        return render_status(self.status, self.clock())

    def set(self, **changes: object) -> None:
        self.status = replace(self.status, **changes)  # type: ignore[arg-type]
        self.refresh()

    def busy(self, activity: str) -> None:
        """Show the spinner (started on the first call) with what is happening now."""
        since = self.status.busy_since if self.status.busy_since is not None else self.clock()
        self.set(activity=activity, busy_since=since)
        if self._timer is None:
            self._timer = self.set_interval(0.1, self.refresh)

    def idle(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.set(activity="", busy_since=None)
