"""Pick a session to resume (Enter) or fork (Ctrl+F): newest first, filtered as you type.

One DataTable holds the rows, so thousands of sessions cost one widget, not one each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label

from peri_cli.session.store import SessionInfo
from peri_cli.tui.format import age, epoch, one_line


@dataclass(frozen=True)
class PickResult:
    session_id: str
    fork: bool


def prefix_length(ids: list[str], least: int = 8) -> int:
    """The shortest prefix length (at least `least`) that tells all these ids apart."""
    length = least
    longest = max((len(i) for i in ids), default=least)
    while length < longest and len({i[:length] for i in ids}) < len(set(ids)):
        length += 1
    return length


def haystack(info: SessionInfo) -> str:
    return f"{info.title} {info.id} {info.parent or ''}".lower()


MAX_ROWS = 400  # rows in the table at once; typing narrows the rest down


class SessionPicker(ModalScreen[PickResult | None]):
    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > Vertical {
        width: 90%;
        max-width: 130;
        height: auto;
        max-height: 90%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    SessionPicker #picker-title { text-style: bold; padding: 0 0 1 0; }
    SessionPicker Input { margin: 0 0 1 0; }
    SessionPicker DataTable { height: auto; max-height: 24; }
    SessionPicker #picker-help { color: $text-muted; padding: 1 0 0 0; width: 100%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Close"),
        Binding("enter", "pick(False)", "Resume", priority=True),
        Binding("ctrl+f", "pick(True)", "Fork", priority=True),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("up", "move(-1)", "Up", show=False, priority=True),
        Binding("pagedown", "move(10)", show=False, priority=True),
        Binding("pageup", "move(-10)", show=False, priority=True),
    ]

    def __init__(self, sessions: list[SessionInfo], *, now: float, current: str | None) -> None:
        super().__init__()
        self.sessions = sessions
        self.now = now
        self.current = current
        self.shown: list[SessionInfo] = []
        self.matched = 0
        self.id_chars = prefix_length([s.id for s in sessions])
        self._haystacks = [haystack(s) for s in sessions]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                Content(f"Resume a session · {len(self.sessions)} in this workspace"),
                id="picker-title",
            )
            yield Input(placeholder="Filter by title or id…", id="picker-filter")
            table: DataTable[str | Text] = DataTable(
                id="picker-table", cursor_type="row", zebra_stripes=True
            )
            table.can_focus = False
            yield table
            yield Label(
                "Enter resume · Ctrl+F fork (continue in a copy) · ↑↓ move · Esc "
                + ("close" if self.current else "quit"),
                id="picker-help",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Title", key="title")
        table.add_column("Age", key="age")
        table.add_column("Msgs", key="msgs")
        table.add_column("Fork of", key="parent")
        table.add_column("Id", key="id")
        self._fill("")
        self.query_one(Input).focus()

    def _fill(self, query: str) -> None:
        table: DataTable[str | Text] = self.query_one(DataTable)
        table.clear()
        words = query.lower().split()
        found = [
            s
            for s, hay in zip(self.sessions, self._haystacks, strict=True)
            if all(w in hay for w in words)
        ]
        self.matched = len(found)
        self.shown = found[:MAX_ROWS]
        heading = f"Resume a session · {len(self.sessions)} in this workspace"
        if words:
            heading += f" · {self.matched} match"
        if self.matched > len(self.shown):
            heading += f" · newest {len(self.shown)} shown, type to narrow"
        self.query_one("#picker-title", Label).update(Content(heading))
        rows = []
        for s in self.shown:
            title = Text(one_line(s.title or "(no prompt)", 60))
            if s.id == self.current:
                title.append("  (current)", style="dim")
            if not s.answered:  # a run that failed before any reply; `-c` passes over it
                title.append("  (no answer)", style="dim")
            rows.append(
                (
                    title,
                    age(self.now - epoch(s.updated)),
                    Text(str(s.message_count), justify="right"),
                    s.parent[: self.id_chars] if s.parent else "",
                    s.id[: self.id_chars],
                )
            )
        table.add_rows(rows)

    @on(Input.Changed)
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def action_move(self, step: int) -> None:
        table = self.query_one(DataTable)
        if self.shown:
            row = max(0, min(len(self.shown) - 1, table.cursor_row + step))
            table.move_cursor(row=row)

    def action_pick(self, fork: bool) -> None:
        table = self.query_one(DataTable)
        if not self.shown:
            return
        info = self.shown[min(table.cursor_row, len(self.shown) - 1)]
        self.dismiss(PickResult(info.id, fork))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    @on(DataTable.RowSelected)
    def _clicked(self, event: DataTable.RowSelected) -> None:
        self.action_pick(False)
