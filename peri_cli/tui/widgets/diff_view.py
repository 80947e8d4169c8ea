"""A coloured unified diff of an Edit (old_string -> new_string) or a Write (new content).

Never cut: every line a call would write is drawn (the approval scrolls it, PgUp/PgDn)."""

from __future__ import annotations

from textual.widgets import Static

from peri_cli.tui.diffs import render_diff


class DiffView(Static):
    DEFAULT_CSS = """
    DiffView {
        padding: 0 1;
        background: $boost;
    }
    """

    def __init__(self, lines: list[str], *, id: str | None = None) -> None:
        super().__init__(render_diff(lines), id=id)
        self.lines = lines

    def show(self, lines: list[str]) -> None:
        self.lines = lines
        self.update(render_diff(lines))
