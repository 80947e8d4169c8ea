"""The status line under the prompt (Claude Code's `statusLine`): one row holding the first line
its command printed, or a short dim note when the command failed; hidden while there is neither.
`statusline_ui` runs the command and hands over `Text` built from visible pieces."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class StatusLineView(Static):
    DEFAULT_CSS = """
    StatusLineView {
        height: 1;
        padding: 0 1;
        color: $text;
    }
    StatusLineView.-note { color: $text-muted; text-style: dim; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self.shown: Text | None = None  # what is drawn now (tests read it)

    def show_line(self, text: Text | None, *, note: bool = False, padding: int = 0) -> None:
        """Draw `text` (None: hide the row), `padding` cells in from the prompt's edge."""
        if text is None and self.shown is None:
            return  # (called after every change of the status bar: nothing to redo)
        self.shown = text
        self.display = text is not None
        self.set_class(note, "-note")
        if self.styles.padding.left != 1 + padding:
            self.styles.padding = (0, 1, 0, 1 + padding)
        self.update(text if text is not None else "")
