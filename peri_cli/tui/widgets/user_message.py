"""A user prompt in the conversation."""

from __future__ import annotations

from textual.widgets import Static

from peri_cli.tui.format import plain


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $primary 10%;
        color: $text;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(plain(text))
        self.text = text
