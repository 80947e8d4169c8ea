"""How a Peri tool call looks in an editor: its kind, a title a person reads, the places it
touches and its content (a diff for Edit and Write, the command for Bash)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
)

from peri_cli.sdk import EditorKind

# (Terminal content is never sent: Bash runs in Peri; named to match the schema's lists)
Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
# A tool's kind for the editor: what the tool's own traits say (`PeriClient.tool_traits`).
KindOf = Callable[[str], EditorKind]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
TITLE_CAP = 120


def other_kind(_name: str) -> EditorKind:
    return "other"


def plain(text: str, cap: int = TITLE_CAP) -> str:
    """One line without control characters (a model's text never steers the editor's screen)."""
    line = " ".join(_CONTROL.sub(" ", text).split())
    return line if len(line) <= cap else line[: cap - 1] + "…"


def _path(value: Any, cwd: Path) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    path = Path(value)
    return str(path if path.is_absolute() else cwd / path)


def title_of(name: str, tool_input: dict[str, Any], cwd: Path) -> str:
    """`Read src/app.py`, `Bash: pytest -q`, `Grep "TODO" in src`."""
    file_path = tool_input.get("file_path")
    if isinstance(file_path, str) and file_path:
        return plain(f"{name} {_shown(file_path, cwd)}")
    if isinstance(command := tool_input.get("command"), str):
        return plain(f"{name}: {command}")
    if isinstance(pattern := tool_input.get("pattern"), str):
        where = tool_input.get("path")
        return plain(f'{name} "{pattern}"' + (f" in {where}" if isinstance(where, str) else ""))
    if isinstance(url := tool_input.get("url"), str):
        return plain(f"{name} {url}")
    if isinstance(description := tool_input.get("description"), str):
        return plain(f"{name}: {description}")
    return plain(name)


def _shown(path: str, cwd: Path) -> str:
    try:
        return str(Path(path).relative_to(cwd)) if Path(path).is_absolute() else path
    except ValueError:
        return path


def locations_of(name: str, tool_input: dict[str, Any], cwd: Path) -> list[ToolCallLocation]:
    path = _path(tool_input.get("file_path") or tool_input.get("notebook_path"), cwd)
    if path is None:
        return []
    offset = tool_input.get("offset")
    line = offset if isinstance(offset, int) and offset > 0 and name == "Read" else None
    return [ToolCallLocation(path=path, line=line)]


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def diff_of(name: str, tool_input: dict[str, Any], cwd: Path) -> list[Content]:
    """The change an Edit or Write makes as a diff block ([] for other tools)."""
    path = _path(tool_input.get("file_path"), cwd)
    if path is None:
        return []
    if name == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return [FileEditToolCallContent(type="diff", path=path, old_text=old, new_text=new)]
    if name == "Write" and isinstance(content := tool_input.get("content"), str):
        return [FileEditToolCallContent(type="diff", path=path, old_text=None, new_text=content)]
    return []


def asked_content(name: str, tool_input: dict[str, Any], cwd: Path) -> list[Content]:
    """What a person reads before approving: the whole diff or the whole command."""
    if diff := diff_of(name, tool_input, cwd):
        return diff
    if isinstance(command := tool_input.get("command"), str):
        return [text_content(command)]
    if isinstance(domain := tool_input.get("domain"), str):
        return [text_content(f"network access to {domain}")]
    return []
