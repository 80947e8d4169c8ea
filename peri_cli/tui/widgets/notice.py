"""An info, warning or error line in the conversation (startup facts, retries, failures)."""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Static

from peri_cli.tui.format import plain

Level = Literal["info", "warning", "error"]
_ICONS: dict[Level, str] = {"info": "ℹ", "warning": "⚠", "error": "✗"}


class NoticeLine(Static):
    DEFAULT_CSS = """
    NoticeLine {
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
    }
    NoticeLine.-warning { color: $warning; border-left: thick $warning; }
    NoticeLine.-error { color: $error; border-left: thick $error; background: $error 10%; }
    """

    def __init__(self, text: str, level: Level = "info", *, id: str | None = None) -> None:
        self.text = text
        self.level = level
        super().__init__(
            Content.assemble(_ICONS[level], " ", plain(text)), classes=f"-{level}", id=id
        )
