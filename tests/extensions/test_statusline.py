"""The status line's command: Claude Code's JSON on stdin (what Peri knows of it), run as hooks
run (the workspace, no credentials, a timeout, bounded output), and what it printed reduced to
its first line, or a short note when it failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peri_cli.extensions.statusline import (
    MAX_LINE_CHARS,
    StatusInfo,
    run_status_line,
    status_payload,
)


def info(tmp_path: Path, **kw: object) -> StatusInfo:
    values: dict[str, object] = {
        "session_id": "0f3c-session",
        "transcript_path": tmp_path / "s.jsonl",
        "workspace": tmp_path,
        "model": "claude-sonnet-4-5",
        "output_style": "default",
        "version": "9.9.9",
        "cost_usd": 0.25,
        "duration_ms": 1500,
        "context_tokens": 50_000,
        "context_window": 200_000,
    } | kw
    return StatusInfo(**values)  # type: ignore[arg-type]


def test_the_payload_has_claude_codes_shape(tmp_path: Path) -> None:
    data = status_payload(info(tmp_path))
    assert data == {
        "hook_event_name": "Status",
        "session_id": "0f3c-session",
        "transcript_path": str(tmp_path / "s.jsonl"),
        "cwd": str(tmp_path),
        "model": {"id": "claude-sonnet-4-5", "display_name": "claude-sonnet-4-5"},
        "workspace": {"current_dir": str(tmp_path), "project_dir": str(tmp_path)},
        "version": "9.9.9",
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": 0.25, "total_duration_ms": 1500},
        "context_window": {
            "context_window_size": 200_000,
            "used_percentage": 25,
            "remaining_percentage": 75,
        },
        "exceeds_200k_tokens": False,
    }
    json.dumps(data)  # plain JSON


def test_unknown_figures_are_left_out_or_zero(tmp_path: Path) -> None:
    data = status_payload(info(tmp_path, cost_usd=None, context_tokens=None))
    assert data["cost"]["total_cost_usd"] == 0  # a model without a price: nothing counted
    assert data["context_window"] == {"context_window_size": 200_000}
    big = status_payload(info(tmp_path, context_tokens=250_000, context_window=1_000_000))
    assert big["exceeds_200k_tokens"] is True
    assert big["context_window"]["used_percentage"] == 25


async def run(tmp_path: Path, command: str, **kw: object) -> tuple[str | None, str | None]:
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-SECRET", "HOME": str(tmp_path)}
    shown = await run_status_line(
        command,
        info(tmp_path),
        cwd=tmp_path,
        env=env,
        timeout=kw.pop("timeout", 5.0),  # type: ignore[arg-type]
    )
    return shown.text, shown.note


async def test_the_command_reads_the_json_and_its_first_line_is_shown(tmp_path: Path) -> None:
    text, note = await run(
        tmp_path,
        'cat > got.json; printf "\\033[32mgreen\\033[0m %s\\nsecond\\n" '
        '"$(pwd) ${ANTHROPIC_API_KEY:-no-key}"',
    )
    assert note is None
    assert text == f"\x1b[32mgreen\x1b[0m {tmp_path} no-key"  # escapes kept: the TUI reads them
    got = json.loads((tmp_path / "got.json").read_text())
    assert got["session_id"] == "0f3c-session" and got["model"]["id"] == "claude-sonnet-4-5"


async def test_no_output_shows_nothing(tmp_path: Path) -> None:
    assert await run(tmp_path, "true") == (None, None)
    assert await run(tmp_path, "printf '\\n\\nlater'") == (None, None)  # the first line is empty


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("echo partial; exit 3", "exited with 3"),
        ("sleep 30", "timed out"),
        ("definitely-not-a-program-xyz", "exited with 127"),
    ],
)
async def test_a_failing_or_hanging_command_gives_a_short_note(
    tmp_path: Path, command: str, said: str
) -> None:
    text, note = await run(tmp_path, command, timeout=0.5)
    assert text is None and note is not None and said in note and len(note) < 80


async def test_huge_output_is_cut_to_one_short_line(tmp_path: Path) -> None:
    text, note = await run(tmp_path, "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo more")
    assert note is None and text is not None
    assert text == "x" * MAX_LINE_CHARS
