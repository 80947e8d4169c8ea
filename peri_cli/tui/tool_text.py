"""What a tool call says in words: its state, its main argument, its output cut to a few lines
and its outcome in one line. Text only: the cards, the board and the tool-call view share it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from peri_cli.tui.diffs import content_lines
from peri_cli.tui.format import one_line
from peri_cli.tui.paths import shown_path

if TYPE_CHECKING:
    from peri_cli.agent.host import SessionHost

RESULT_LINES = 12
PROGRESS_LINES = 12  # of a running call's output
LINE_CHARS = 240
State = Literal["pending", "running", "done", "error", "cancelled"]
GLYPHS: dict[State, tuple[str, str]] = {
    "pending": ("○", "dim"),
    "running": ("◐", "yellow"),
    "done": ("●", "green"),
    "error": ("✗", "red"),
    "cancelled": ("■", "yellow"),
}
PATH_ARGS = frozenset({"file_path", "path"})
_SPILLED = re.compile(r"\A\[Output was (\d+) lines")
_BASH_END = re.compile(r"\n(Exit code: -?\d+|Killed by signal \w+)\Z")


def _no_card_arg(_name: str) -> str | None:
    return None


@dataclass(frozen=True)
class ToolLook:
    """How a session's tool calls are shown: paths from its workspace, and the input field each
    tool's card names (the tool's own `traits.card_arg`, from the runtime)."""

    workspace: Path | None = None
    card_arg: Callable[[str], str | None] = _no_card_arg


NO_LOOK = ToolLook()  # no workspace, no card arguments (the input shown as JSON)


def look_of(host: SessionHost) -> ToolLook:
    """The look of the tool calls of the run `host` holds."""
    return ToolLook(host.workspace, lambda name: host.tool_traits(name).card_arg)


def main_arg(name: str, tool_input: dict[str, Any], look: ToolLook) -> str | None:
    """The argument that says what a call does (a path shown where it really lands)."""
    key = look.card_arg(name)
    value = tool_input.get(key) if key else None
    if isinstance(value, list):  # a list argument (TodoWrite's tasks) by its length
        return f"{len(value)} item{'' if len(value) == 1 else 's'}"
    if not isinstance(value, str):
        return None
    return shown_path(value, look.workspace) if key in PATH_ARGS else value


def summarize_input(name: str, tool_input: dict[str, Any] | None, look: ToolLook) -> str:
    if not tool_input:
        return ""
    arg = main_arg(name, tool_input, look)
    if arg is not None:
        return one_line(arg, 70)
    return one_line(json.dumps(tool_input, ensure_ascii=False, default=str), 70)


def output_lines(output: str) -> list[str]:
    """A result's lines, split on newlines only (so the count is what a terminal would show)."""
    return content_lines(output.rstrip("\n")) or [""]


def _cut(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


def trim_output(output: str, max_lines: int = RESULT_LINES) -> tuple[str, int]:
    """The first lines of a result (long lines cut) and how many lines were left out."""
    lines = output_lines(output)
    return "\n".join(_cut(ln) for ln in lines[:max_lines]), max(0, len(lines) - max_lines)


def tail_output(output: str, max_lines: int = RESULT_LINES) -> tuple[str, int]:
    """The last lines of a result (where a command's errors are) and how many came before."""
    lines = output_lines(output)
    return "\n".join(_cut(ln) for ln in lines[-max_lines:]), max(0, len(lines) - max_lines)


def bash_line_count(output: str) -> int:
    """Lines the command printed: its own count when the output was cut to a tail, without the
    exit-status line Peri adds."""
    spilled = _SPILLED.match(output)
    if spilled:
        return int(spilled.group(1))
    body = _BASH_END.sub("", output.rstrip("\n"))
    if body in ("", "(no output)"):
        return 0
    return len(output_lines(body))


def outcome(name: str, output: str, is_error: bool) -> str:
    lines = output.strip().split("\n")
    if is_error:
        return one_line(lines[0], 60) if lines[0] else "error"
    if name == "Bash":
        count = bash_line_count(output)
        status = _BASH_END.search(output.rstrip("\n"))
        said = f"{count} line{'s' if count != 1 else ''}" if count != 1 or len(lines) > 1 else ""
        said = said or one_line(lines[0], 50)
        return f"{said} · {status.group(1)}" if status else said
    if not output.strip():
        return "no output"
    return one_line(lines[0], 50) if len(lines) == 1 else f"{len(lines)} lines"
