"""A unified diff of an Edit (old_string -> new_string) or a Write (new content), as lines and
as coloured `Content`. Never cut: every line a call would write is drawn."""

from __future__ import annotations

import difflib
from typing import Any

from textual.content import Content

from peri_cli.base.textsafe import visible


def diff_lines(old: str, new: str) -> list[str]:
    before, after = content_lines(old), content_lines(new)
    lines = list(difflib.unified_diff(before, after, lineterm="", n=2))
    return lines[2:]  # drop the ---/+++ header: the call's title names the file


def content_lines(text: str) -> list[str]:
    """Lines as a file holds them: split on newlines only (a CR or form feed is part of a line,
    shown visibly), no phantom last line after a final newline."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def render_diff(lines: list[str]) -> Content:
    pieces: list[Content] = []
    for raw in lines:
        line = visible(raw)
        if line.startswith("@@"):
            if not pieces:
                continue  # the first hunk needs no marker; later ones show where a gap was
            line, style = "⋯", "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = "dim"
        pieces.append(Content.styled(line, style))
    return Content("\n").join(pieces)


def diff_for(name: str, tool_input: dict[str, Any]) -> list[str] | None:
    """The diff a file-changing call makes, as far as its input tells; None for other tools."""
    if name == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return diff_lines(old, new)
    if name == "Write":
        content = tool_input.get("content")
        if isinstance(content, str):
            return [f"+{line}" for line in content_lines(content)]
    return None
