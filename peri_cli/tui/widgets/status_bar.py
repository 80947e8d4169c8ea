"""The bottom line: model, provider, mode, context use, cache share, cost, activity; at any width
it names the model and the permission mode."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.tui.format import cost, elapsed, plain, tokens

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
    streamed_chars: int = 0  # of replies and reasoning since busy: "tokens so far"


def render_status(s: Status, now: float, width: int = 10_000) -> Content:
    """The status line, fitted to `width` cells: the least needed parts go first (the token
    detail, the cache share, the provider, the cost, the context share); the model and the
    permission mode always stay."""
    if not s.model and s.busy_since is not None:  # starting: nothing known yet but that
        return _activity(s, now)
    parts: dict[str, Content] = {"model": plain(s.model, "bold"), "provider": plain(s.provider)}
    if s.mode:  # (none while starting: the mode waits for the workspace's trust)
        parts["mode"] = plain(s.mode, MODE_COLORS.get(s.mode, "$text"))
    if s.window:
        pct = (s.context_tokens or 0) / s.window
        color = "$error" if pct >= 0.9 else "$warning" if pct >= 0.75 else "$text"
        approx = "~" if s.context_estimated else ""
        parts["ctx"] = Content.assemble("ctx ", (f"{approx}{pct:.0%}", color))
        parts["used"] = Content(f"{approx}{tokens(s.context_tokens)}/{tokens(s.window)}")
    if s.cache_share is not None:
        parts["cache"] = Content(f"cache {s.cache_share:.0%}")
    parts["cost"] = Content(cost(s.cost_usd))
    activity = _activity(s, now) if s.busy_since is not None else None
    for drop in (None, "used", "cache", "provider", "cost", "ctx"):
        if drop is not None:
            parts.pop(drop, None)
        line = _line(parts, activity)
        if line.cell_length <= width:
            return line
    rest = _line(parts, None)
    if activity is not None:  # still too wide: what is happening gives way, then the spinner
        room = width - rest.cell_length - 2
        short = _activity(s, now, short=True)
        shown = activity.truncate(room, ellipsis=True) if room > short.cell_length else short
        line = Content.assemble(shown, "  ", rest)
    if line.cell_length > width:  # a very long model name gives way; the mode never does
        room = max(1, width - (parts["mode"].cell_length + 3 if "mode" in parts else 0))
        parts["model"] = parts["model"].truncate(room, ellipsis=True)
        line = _line(parts, None)
    return line


def _line(parts: dict[str, Content], activity: Content | None) -> Content:
    pieces = [parts["model"], parts.get("provider"), parts.get("mode")]
    if "ctx" in parts:
        pieces.append(
            Content.assemble(parts["ctx"], " ", parts["used"]) if "used" in parts else parts["ctx"]
        )
    pieces += [parts.get("cache"), parts.get("cost")]
    line = Content(" · ").join(p for p in pieces if p is not None)
    return line if activity is None else Content.assemble(activity, "  ", line)


def _activity(s: Status, now: float, *, short: bool = False) -> Content:
    spent = now - (s.busy_since or now)
    frame = SPINNER[int(spent * 10) % len(SPINNER)]
    what = "" if short else f" {visible(s.activity or 'working')}"
    so_far = ""
    if s.streamed_chars and not short:  # about four characters a token, as the estimate says
        so_far = f" · ↓ {tokens(max(1, s.streamed_chars // 4))} tokens"
    return Content.styled(f"{frame}{what} {elapsed(spent)}{so_far}", "$accent")


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
        self.when_set: Callable[[], None] | None = None  # the status line under the prompt

    def render(self) -> Content:
        return render_status(self.status, self.clock(), self.content_region.width or 10_000)

    def set(self, **changes: object) -> None:
        self.status = replace(self.status, **changes)  # type: ignore[arg-type]
        self.refresh()
        if self.when_set is not None:
            self.when_set()

    def busy(self, activity: str) -> None:
        """Show the spinner (started on the first call) with what is happening now."""
        since = self.status.busy_since if self.status.busy_since is not None else self.clock()
        self.set(activity=activity, busy_since=since)
        if self._timer is None:
            self._timer = self.set_interval(0.1, self.refresh)

    def count_output(self, text: str) -> None:
        """Streamed text of the running turn (the spinner's "tokens so far"); the spinner's
        timer redraws it."""
        self.status = replace(self.status, streamed_chars=self.status.streamed_chars + len(text))

    def idle(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.set(activity="", busy_since=None, streamed_chars=0)
