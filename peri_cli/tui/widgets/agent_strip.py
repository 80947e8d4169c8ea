"""The agent strip: under the prompt while SubAgents run, one row each (at most five in view):
state, latest tool call, elapsed time.

Ctrl+↓ (or ↓ on an empty prompt) focuses it; there ↑/↓ select, Enter opens the child's pane,
`x` stops the child, Esc returns to the prompt. Any other printable key goes back to the prompt
(the app moves it there), so typing never acts on a child. The strip only draws: the app gives
it the children (`show`) and acts on its messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from peri_cli.tui.format import one_line, plain

if TYPE_CHECKING:
    from peri_cli.tui.agent_board import ChildInfo

VISIBLE_ROWS = 5
HINT_IDLE = "Ctrl+↓ to manage"
HINT_FOCUSED = "↑↓ select · Enter open · x stop · Esc back"


class AgentStrip(Widget, can_focus=True):
    DEFAULT_CSS = """
    AgentStrip {
        height: auto;
        max-height: 6;
        margin: 0 1;
        padding: 0 1;
        color: $text-muted;
        border-left: outer $accent 40%;
        &:focus { border-left: outer $accent; background: $accent 8%; }
    }
    """

    class Open(Message):
        def __init__(self, child_id: str) -> None:
            super().__init__()
            self.child_id = child_id

    class Stop(Message):
        def __init__(self, child_id: str) -> None:
            super().__init__()
            self.child_id = child_id

    class Leave(Message):
        """Esc: back to the prompt."""

    def __init__(self, clock: Callable[[], float], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.rows: list[ChildInfo] = []
        self.selected = 0
        self.display = False

    @property
    def current(self) -> ChildInfo | None:
        return self.rows[self.selected] if self.rows else None

    def show(self, rows: Sequence[ChildInfo]) -> None:
        """The children to list (the running ones); keeps the selected child selected."""
        keep = self.current.id if self.current else None
        self.rows = list(rows)
        ids = [r.id for r in self.rows]
        self.selected = ids.index(keep) if keep in ids else min(self.selected, len(ids) - 1)
        self.selected = max(0, self.selected)
        self.display = bool(self.rows)
        self.refresh(layout=True)

    @property
    def wanted_height(self) -> int:
        """The rows it takes once laid out (its head and at most five children): what the
        approval must leave it, known before the next layout pass."""
        if not self.rows:
            return 0
        return 1 + min(len(self.rows), VISIBLE_ROWS) + self.styles.margin.height

    def render(self) -> Content:
        from peri_cli.tui.widgets.agent_card import child_summary

        now = self.clock()
        total = len(self.rows)
        first = 0
        if total > VISIBLE_ROWS:  # a window of five around the selected row
            first = min(max(0, self.selected - VISIBLE_ROWS // 2), total - VISIBLE_ROWS)
        shown = self.rows[first : first + VISIBLE_ROWS]
        running = sum(1 for r in self.rows if r.state == "running")
        hint = HINT_FOCUSED if self.has_focus else HINT_IDLE
        more = f" ({first} above, {total - first - len(shown)} below)" if total > len(shown) else ""
        head = f"SubAgents: {running} running, {total - running} waiting{more} · {hint}"
        if running == total:
            head = f"SubAgents: {running} running{more} · {hint}"
        lines = [Content.styled(head, "dim")]
        width = max(20, self.content_region.width or 80)
        for i, info in enumerate(shown, start=first):
            pieces = child_summary(info, now, width=max(10, width // 3))
            row = Content(" · ").join([plain(one_line(info.label, max(10, width // 3))), *pieces])
            if i == self.selected and self.has_focus:
                row = Content.assemble(("› ", "bold"), row.stylize("reverse"))
            else:
                row = Content.assemble("  ", row)
            lines.append(row.truncate(width, ellipsis=True))
        return Content("\n").join(lines)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_key(self, event: events.Key) -> None:
        """The strip's own keys; everything else goes on (printable keys to the prompt)."""
        handled = True
        if event.key == "up":
            self.selected = max(0, self.selected - 1)
            self.refresh()
        elif event.key == "down":
            self.selected = min(len(self.rows) - 1, self.selected + 1)
            self.refresh()
        elif event.key == "enter" and self.current is not None:
            self.post_message(self.Open(self.current.id))
        elif event.key == "x" and self.current is not None:
            self.post_message(self.Stop(self.current.id))
        elif event.key == "escape":
            self.post_message(self.Leave())
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
