"""A coloured unified diff of an Edit (old_string -> new_string) or a Write (new content)."""

from __future__ import annotations

import difflib
from typing import Any

from rich.text import Text
from textual.widgets import Static

MAX_LINES = 60


def diff_lines(old: str, new: str) -> list[str]:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2))
    return lines[2:]  # drop the ---/+++ header: the call's title names the file


def render_diff(lines: list[str], max_lines: int = MAX_LINES) -> Text:
    text = Text()
    for raw in lines[:max_lines]:
        line = raw
        if line.startswith("@@"):
            if not text.plain:
                continue  # the first hunk needs no marker; later ones show where a gap was
            line, style = "⋯", "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = "dim"
        text.append(line + "\n", style=style)
    if len(lines) > max_lines:
        text.append(f"… {len(lines) - max_lines} more diff lines\n", style="dim italic")
    text.rstrip()
    return text


def diff_for(name: str, tool_input: dict[str, Any]) -> list[str] | None:
    """The diff a file-changing call makes, as far as its input tells; None for other tools."""
    if name == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return diff_lines(old, new)
    if name == "Write":
        content = tool_input.get("content")
        if isinstance(content, str):
            return [f"+{line}" for line in content.splitlines()]
    return None


class DiffView(Static):
    DEFAULT_CSS = """
    DiffView {
        padding: 0 1;
        background: $boost;
    }
    """

    def __init__(self, lines: list[str]) -> None:
        super().__init__(render_diff(lines))
        self.lines = lines
