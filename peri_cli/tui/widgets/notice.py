"""An info, warning or error line in the conversation (startup facts, retries, failures)."""

from __future__ import annotations

from typing import Literal

from textual.widgets import Static

from peri_cli.tui.format import markup

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

    def __init__(self, text: str, level: Level = "info", *, rich_markup: bool = False) -> None:
        self.text = text
        self.level = level
        body = text if rich_markup else markup(text)
        super().__init__(f"{_ICONS[level]} {body}", classes=f"-{level}")
