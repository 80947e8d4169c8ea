"""Text folded under a one-line title: the model's thinking, a compaction summary, re-injected
files. Expand it to read it."""

from __future__ import annotations

from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from peri_cli.tui.format import plain
from peri_cli.tui.widgets.fold import Fold

REDRAW_INTERVAL = 0.1  # seconds: streamed thinking is redrawn at most this often while open


class FoldedText(Fold):
    DEFAULT_CSS = """
    FoldedText { margin: 1 0 0 0; }
    FoldedText > .fold--body { padding: 0 0 0 3; }
    FoldedText > .fold--title, FoldedText .folded-text { color: $text-muted; }
    FoldedText.-thinking > .fold--title, FoldedText.-thinking .folded-text { text-style: italic; }
    """

    def __init__(self, title: str, text: str = "", *, classes: str | None = None) -> None:
        super().__init__(title, collapsed=True, classes=classes)
        self.text = text
        self._text_view: Static | None = None  # built on the first expand
        self._timer: Timer | None = None

    def build_body(self) -> list[Widget]:
        self._text_view = Static(plain(self.text), classes="folded-text")
        return [self._text_view]

    def add(self, fragment: str) -> None:
        """Append streamed text; shown (if open) at most every REDRAW_INTERVAL seconds."""
        self.text += fragment
        if self._text_view is not None and self._timer is None and self.is_mounted:
            self._timer = self.set_timer(REDRAW_INTERVAL, self._redraw)

    def _redraw(self) -> None:
        self._timer = None
        if self._text_view is not None:
            self._text_view.update(plain(self.text))
