"""The status line's command (Claude Code's `statusLine`): the JSON it reads on stdin, built from
what Peri knows of the session, and its run, as hooks run (`hookrun.run_command`). What it printed
comes back as its first line, escape sequences and all: the TUI keeps the colours and shows the
rest of them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peri_cli.extensions.hookrun import run_command

DEFAULT_TIMEOUT = 5.0  # seconds: a status line that takes longer shows a note instead
MAX_OUTPUT_BYTES = 64 * 1024  # read of its output; the rest is read and dropped
MAX_LINE_CHARS = 1000  # of the first line: far wider than any terminal


@dataclass(frozen=True)
class StatusInfo:
    """What Peri knows of the session shown, for the status line's JSON."""

    session_id: str
    transcript_path: Path
    workspace: Path
    model: str
    output_style: str  # the session's frozen style: "default" or its name
    version: str
    cost_usd: float | None  # None: a model without a known price
    duration_ms: int  # since the session was shown
    context_tokens: int | None  # None: not known yet
    context_window: int


@dataclass(frozen=True)
class StatusLineShown:
    """The line to show (None: nothing), or a short note saying why there is none."""

    text: str | None = None
    note: str | None = None


def status_payload(info: StatusInfo) -> dict[str, Any]:
    """Claude Code's status line input, with the fields Peri can fill."""
    window: dict[str, Any] = {"context_window_size": info.context_window}
    if info.context_tokens is not None and info.context_window > 0:
        used = min(100, round(100 * info.context_tokens / info.context_window))
        window |= {"used_percentage": used, "remaining_percentage": 100 - used}
    return {
        "hook_event_name": "Status",
        "session_id": info.session_id,
        "transcript_path": str(info.transcript_path),
        "cwd": str(info.workspace),
        "model": {"id": info.model, "display_name": info.model},
        "workspace": {"current_dir": str(info.workspace), "project_dir": str(info.workspace)},
        "version": info.version,
        "output_style": {"name": info.output_style},
        "cost": {"total_cost_usd": info.cost_usd or 0, "total_duration_ms": info.duration_ms},
        "context_window": window,
        "exceeds_200k_tokens": (info.context_tokens or 0) > 200_000,
    }


async def run_status_line(
    command: str,
    info: StatusInfo,
    *,
    cwd: Path,
    env: dict[str, str],
    hidden_env: tuple[str, ...] = (),
    timeout: float = DEFAULT_TIMEOUT,
) -> StatusLineShown:
    """Run the command with the JSON on stdin; never raises for anything the command does."""
    stdin = json.dumps(status_payload(info), ensure_ascii=False).encode("utf-8")
    done = await run_command(
        command,
        stdin,
        cwd=cwd,
        env=env,
        hidden_env=hidden_env,
        timeout=timeout,
        max_output=MAX_OUTPUT_BYTES,
    )
    if done.error is not None:
        return StatusLineShown(note=f"status line: {done.error}"[:120])
    if done.timed_out:
        return StatusLineShown(note=f"status line timed out after {timeout:g} s")
    if done.exit_code != 0:
        return StatusLineShown(note=f"status line exited with {done.exit_code}")
    first = done.stdout.split("\n", 1)[0].rstrip("\r")
    return StatusLineShown(text=first[:MAX_LINE_CHARS] if first.strip() else None)
