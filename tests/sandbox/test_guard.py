"""The protected-path check between sandboxed commands (`sandbox/guard.py`) and its move aside
(`sandbox/aside.py`), on real folders: what a command leaves is moved or held back, what Peri
or the user does between commands is taken as it is, and the move never follows a link."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from peri_cli.base.atomic import atomic_write
from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.sandbox.aside import NotMoved, move_aside
from peri_cli.sandbox.guard import ProtectedGuard


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@pytest.fixture
def guard(ws: Path, tmp_path: Path) -> Iterator[ProtectedGuard]:
    reports: list[str] = []
    g = ProtectedGuard(ws, lambda: tmp_path / "refused", on_report=reports.extend, tick=3600)
    yield g
    g.close()


def test_a_plant_is_moved_aside_and_a_clash_numbered(
    ws: Path, guard: ProtectedGuard, tmp_path: Path
) -> None:
    refused = tmp_path / "refused"
    for n in range(2):
        seq = guard.started()
        (ws / ".mcp.json").write_text(f"plant {n}")
        guard.ended(seq)
        assert not (ws / ".mcp.json").exists()
    assert (refused / ".mcp.json").read_text() == "plant 0"
    assert (refused / ".mcp.json.1").read_text() == "plant 1"
    notes = guard.take_notes() or ""
    assert notes.count("moved aside") == 2 and "ask the user" in notes
    assert guard.take_notes() is None  # told once


def test_what_changes_between_commands_is_taken_as_it_is(ws: Path, guard: ProtectedGuard) -> None:
    guard.ended(guard.started())
    (ws / ".mcp.json").write_text("{}")  # the user's own, made while nothing sandboxed ran
    (ws / "sub" / ".claude").mkdir(parents=True)
    guard.ended(guard.started())
    assert (ws / ".mcp.json").exists() and (ws / "sub" / ".claude").exists()
    assert guard.take_notes() is None
    assert ws / ".mcp.json" in guard.protected().paths  # bound read-only from now on


def test_peri_s_own_write_during_a_command_is_not_a_plant(ws: Path, guard: ProtectedGuard) -> None:
    seq = guard.started()  # a background command runs meanwhile
    (ws / "sub").mkdir()
    (ws / "sub" / ".peri").mkdir()
    atomic_write(ws / "sub" / ".peri" / "settings.json", b"{}")  # Peri's Write, approved
    atomic_write(ws / ".mcp.json", b"{}")
    guard.ended(seq)
    assert (ws / "sub" / ".peri" / "settings.json").exists() and (ws / ".mcp.json").exists()
    assert guard.take_notes() is None


def test_a_tracked_path_is_held_back_and_not_read_until_released(
    ws: Path, guard: ProtectedGuard
) -> None:
    other = ws.parent / "other"
    subprocess.run(["git", "clone", "-q", str(ws), str(other)], check=True, capture_output=True)
    (other / ".mcp.json").write_text('{"mcpServers": {}}')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], cwd=other, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=other, check=True)
    seq = guard.started()
    subprocess.run(["git", "pull", "-q", str(other)], cwd=ws, check=True, capture_output=True)
    (ws / ".mcp.json.extra").write_text("")  # (not protected: left alone)
    guard.ended(seq)
    assert (ws / ".mcp.json").exists()  # as git left it
    assert "held back" in (guard.take_notes() or "")
    with pytest.raises(SafeReadError) as held:
        read_text(ws / ".mcp.json")
    assert held.value.problem == "held" and "confirm" in held.value.reason
    guard.release(ws / ".mcp.json")
    assert read_text(ws / ".mcp.json") == '{"mcpServers": {}}'


def test_untracked_files_in_a_tracked_folder_are_moved_one_by_one(
    ws: Path, guard: ProtectedGuard, tmp_path: Path
) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    (ws / "sub" / ".claude").mkdir(parents=True)
    (ws / "sub" / ".claude" / "agents.md").write_text("tracked")
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=ws, check=True)
    shutil.rmtree(ws / "sub")
    guard.ended(guard.started())
    seq = guard.started()
    subprocess.run(["git", "checkout", "-q", "--", "sub"], cwd=ws, check=True)
    (ws / "sub" / ".claude" / "settings.json").write_text("planted")
    guard.ended(seq)
    assert (ws / "sub" / ".claude" / "agents.md").read_text() == "tracked"
    assert not (ws / "sub" / ".claude" / "settings.json").exists()
    assert (tmp_path / "refused" / "sub" / ".claude" / "settings.json").read_text() == "planted"


def test_a_new_repository_that_runs_commands_is_named(ws: Path, guard: ProtectedGuard) -> None:
    seq = guard.started()
    subprocess.run(["git", "init", "-q", str(ws / "plain")], check=True)
    subprocess.run(["git", "init", "-q", str(ws / "mon")], check=True)
    subprocess.run(["git", "-C", str(ws / "mon"), "config", "alias.st", "!touch x"], check=True)
    (ws / "mon" / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    guard.ended(seq)
    notes = guard.take_notes() or ""
    assert "mon/.git" in notes and "alias.st = !touch x" in notes and "hooks/post-checkout" in notes
    assert "plain" not in notes
    assert (ws / "mon" / ".git").is_dir() and ws / "mon" / ".git" in guard.protected().git_dirs


def test_the_move_never_follows_a_link(tmp_path: Path) -> None:
    ws, out, refused = tmp_path / "ws", tmp_path / "out", tmp_path / "refused"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / ".mcp.json").write_text("outside")
    ws.mkdir()
    os.symlink(out / "sub", ws / "sub")  # a folder swapped for a link after the check
    with pytest.raises(NotMoved, match="symbolic link"):
        move_aside(ws, Path("sub/.mcp.json"), refused)
    assert (out / "sub" / ".mcp.json").read_text() == "outside"
    (ws / "d").mkdir()
    os.symlink("/etc/passwd", ws / "d" / ".mcp.json")  # the link itself is what is moved
    moved = move_aside(ws, Path("d/.mcp.json"), refused)
    assert moved.is_symlink() and not (ws / "d" / ".mcp.json").exists()


def test_a_move_to_another_file_system_is_refused_and_the_path_held(tmp_path: Path) -> None:
    if not Path("/dev/shm").is_dir() or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on another file system")
    shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        (shm / ".mcp.json").write_text("x")
        with pytest.raises(NotMoved, match="another file system"):
            move_aside(shm, Path(".mcp.json"), tmp_path / "refused")
        guard = ProtectedGuard(shm, lambda: tmp_path / "refused", tick=3600)
        (shm / ".mcp.json").unlink()
        seq = guard.started()
        (shm / ".mcp.json").write_text("planted")
        guard.ended(seq)
        notes = guard.take_notes() or ""
        assert "could not be moved aside" in notes and (shm / ".mcp.json").exists()
        with pytest.raises(SafeReadError):
            read_text(shm / ".mcp.json")
        guard.close()
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def test_the_check_runs_before_peri_reads_a_protected_file(ws: Path, guard: ProtectedGuard) -> None:
    """A background command's plant is judged before Peri reads it (a skill, `.mcp.json`), not
    only every 2 s: the read finds nothing there."""
    guard.started()  # still running
    (ws / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "evil"}}}')
    with pytest.raises(SafeReadError) as gone:
        read_text(ws / ".mcp.json")
    assert gone.value.missing and "moved aside" in (guard.take_notes() or "")
