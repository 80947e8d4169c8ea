"""Text folded under a one-line title: the model's thinking, a compaction summary, re-injected
files. Expand it to read it."""

from __future__ import annotations

from textual.widgets import Collapsible, Static

from peri_cli.tui.format import markup


class FoldedText(Collapsible):
    DEFAULT_CSS = """
    FoldedText {
        margin: 1 0 0 0;
        padding: 0;
        border: none;
        background: transparent;
    }
    FoldedText > Contents { padding: 0 0 0 3; }
    FoldedText Static { color: $text-muted; }
    FoldedText.-thinking Static { text-style: italic; }
    """

    def __init__(self, title: str, text: str = "", *, classes: str | None = None) -> None:
        self.text = text
        self._body = Static(markup(text))
        super().__init__(self._body, title=title, collapsed=True, classes=classes)

    def add(self, fragment: str) -> None:
        self.text += fragment
        self._body.update(markup(self.text))
