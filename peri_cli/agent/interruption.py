"""Pure: the note that tells the model (and the user) what a cancelled or failed turn left behind.

A turn that does not finish commits nothing half-done, so its tool calls and results never reach
the transcript. Their effects on files and processes remain, though: the note says which calls had
run, which were stopped, and that their results were not kept, so the model does not redo or
assume work blindly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from peri_cli.base.textsafe import visible

_MAIN_ARGS = ("file_path", "command", "pattern", "path", "url", "query", "prompt", "name")
MAX_ARG_CHARS = 80


def describe_call(name: str, tool_input: dict[str, Any]) -> str:
    """`Edit src/a.py`, `Bash: sleep 30`: a tool call in a few words."""
    for key in _MAIN_ARGS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            flat = " ".join(visible(value).split())
            if len(flat) > MAX_ARG_CHARS:
                flat = flat[: MAX_ARG_CHARS - 1] + "…"
            return f"{name} {flat}" if key in ("file_path", "path") else f"{name}: {flat}"
    return name


@dataclass
class TurnProgress:
    """What the uncommitted part of a turn has done so far."""

    phase: Literal["waiting", "reply", "tools"] = "waiting"
    finished: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    not_started: list[str] = field(default_factory=list)

    def reset(self) -> None:
        self.phase = "waiting"
        self.finished.clear()
        self.running.clear()
        self.not_started.clear()


def interruption_note(
    progress: TurnProgress, reason: Literal["cancelled", "failed"], error: str | None = None
) -> str:
    """The user-side note recorded for an interrupted turn; it always says "interrupted"."""
    if reason == "cancelled":
        head = "The user interrupted the previous turn (Ctrl+C/Esc) before it finished."
    else:
        head = f"The previous turn was interrupted by an error: {error or 'unknown error'}."
    parts = [head]
    if progress.phase == "reply":
        parts.append("The reply that was being written was not kept.")
    elif progress.phase == "waiting":
        parts.append("No reply had been received.")
    if progress.phase == "tools":
        parts.append("Its tool calls and their results were not kept in this conversation.")
        if progress.finished:
            parts.append(
                "These calls had already run and their effects remain: "
                + "; ".join(progress.finished)
                + "."
            )
        if progress.running:
            parts.append(
                "These were stopped while running and may have partly run: "
                + "; ".join(progress.running)
                + "."
            )
        if progress.not_started:
            parts.append("These never started: " + "; ".join(progress.not_started) + ".")
        parts.append("Check the current state before redoing anything.")
    return "[" + " ".join(parts) + "]"
