"""A unified diff of an Edit (old_string -> new_string) or a Write (new content), as lines and
as coloured `Content`. Never cut: every line a call would write is drawn."""

from __future__ import annotations

import difflib
from typing import Any

from textual.content import Content

from peri_cli.base.textsafe import visible

CONTEXT = 3  # unchanged lines shown around each change of an approval's diff


def file_diff(name: str, tool_input: dict[str, Any], current: str | None) -> list[str] | None:
    """What an Edit or a Write does to the file as it is now (`current`; None: no such file),
    numbered, with CONTEXT lines around each change; None when that cannot be known (another
    tool, or an Edit whose text is not in the file: it fails without asking anyway)."""
    if name == "Write":
        content = tool_input.get("content")
        return numbered_diff(current or "", content) if isinstance(content, str) else None
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if name != "Edit" or not isinstance(old, str) or not isinstance(new, str):
        return None
    if current is None or not old or old not in current:
        return None
    count = -1 if tool_input.get("replace_all") is True else 1
    return numbered_diff(current, current.replace(old, new, count))


def numbered_diff(before: str, after: str, context: int = CONTEXT) -> list[str]:
    """Diff lines "-  12 │ text" (the old line's number), "+  12 │ text" and "   13 │ text"
    (the new file's numbers), "@@" between hunks."""
    a, b = content_lines(before), content_lines(after)
    width = len(str(max(len(a), len(b), 1)))
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f" {j1 + k + 1:>{width}} │ {b[j1 + k]}" for k in range(i2 - i1)]
                continue
            out += [f"-{i + 1:>{width}} │ {a[i]}" for i in range(i1, i2)]
            out += [f"+{j + 1:>{width}} │ {b[j]}" for j in range(j1, j2)]
    return out


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
