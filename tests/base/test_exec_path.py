"""Issue 37 item 4: which PATH entries a sandboxed command can write, and where Peri looks up what
it runs outside the sandbox (`exec_path`, `programs`)."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest

from peri_cli.base import programs
from peri_cli.base.exec_path import first_inside, split_path, writable_entry, writable_last


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\necho planted\n")
    path.chmod(0o755)
    return path


def test_entries_in_or_through_a_writable_root_are_writable(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "usr" / "bin"
    (ws / ".venv" / "bin").mkdir(parents=True)
    outside.mkdir(parents=True)
    os.symlink(outside, ws / "link")  # in the workspace, to a folder outside: replaceable
    (tmp_path / "opt").mkdir()
    os.symlink(ws / "link", tmp_path / "opt" / "tools")  # outside, through the workspace's link
    os.symlink(ws / ".venv" / "bin", tmp_path / "venvbin")  # outside, into the workspace
    roots = [ws]
    for entry in ("", ".", "bin", f"{ws}/.venv/bin", f"{ws}/link", f"{tmp_path}/opt/tools"):
        assert writable_entry(entry, roots), entry
    assert writable_entry(str(tmp_path / "venvbin"), roots)
    assert writable_entry(f"{ws}/not-there-yet/bin", roots)  # a command may make it
    assert not writable_entry(str(outside), roots)
    assert not writable_entry(f"{tmp_path}/ws2", roots)  # a sibling whose name starts alike


def test_the_writable_entries_move_last_in_their_order(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    path = os.pathsep.join([f"{ws}/.venv/bin", "/usr/local/bin", f"{ws}/node_modules/.bin", "/bin"])
    assert split_path(path, [ws]) == (
        ["/usr/local/bin", "/bin"],
        [f"{ws}/.venv/bin", f"{ws}/node_modules/.bin"],
    )
    assert writable_last(path, [ws]).split(os.pathsep) == [
        "/usr/local/bin",
        "/bin",
        f"{ws}/.venv/bin",
        f"{ws}/node_modules/.bin",
    ]


def test_peri_inside_a_writable_root_is_found(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".venv").mkdir(parents=True)
    assert first_inside([Path("/usr"), ws / ".venv"], [ws]) == ws / ".venv"
    assert first_inside([Path("/usr"), tmp_path / "other"], [ws]) is None


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, str]:
    """A workspace guarded for the test, whose `.venv/bin` (first on the PATH returned) holds a
    planted `bash`, `python3` and `only-here`."""
    ws = tmp_path / "ws"
    venv = ws / ".venv" / "bin"
    for name in ("bash", "python3", "only-here"):
        _program(venv, name)
    owner = object()
    programs.guard(owner, [ws])
    yield ws, os.pathsep.join([str(venv), os.environ["PATH"]])
    programs.release(owner)


def test_find_skips_what_a_command_planted(planted: tuple[Path, str]) -> None:
    ws, path = planted
    assert programs.find("bash", path) == shutil.which("bash", path=os.environ["PATH"])
    assert programs.find("only-here", path) is None
    assert "only in folders that sandboxed commands can write" in programs.missing(
        "only-here", path
    )
    assert programs.child_path(path).split(os.pathsep)[-1] == str(ws / ".venv" / "bin")


def test_an_interpreter_at_a_commands_start_gets_its_full_path(planted: tuple[Path, str]) -> None:
    _, path = planted
    python = shutil.which("python3", path=os.environ["PATH"])
    assert python is not None
    command = programs.interpreter_command("python3 ${HOME}/plugin/hook.py --x", path)
    assert command == f"{shlex.quote(python)} ${{HOME}}/plugin/hook.py --x"
    assert programs.interpreter_command("make lint", path) == "make lint"  # project code: as is
    assert programs.interpreter_program("python3", path) == python
    assert programs.interpreter_program("npx", path) == "npx"


def test_an_interpreter_found_only_where_commands_write_is_refused(
    planted: tuple[Path, str], tmp_path: Path
) -> None:
    ws, _ = planted
    only_venv = str(ws / ".venv" / "bin")
    with pytest.raises(LookupError, match="only in folders that sandboxed commands can write"):
        programs.interpreter_command("bash hook.sh", only_venv)
    with pytest.raises(LookupError, match="python3"):
        programs.interpreter_program("python3", only_venv)


def test_extra_roots_count_as_writable(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "bin"
    _program(folder, "tool-x")
    assert programs.find("tool-x", str(folder)) == str(folder / "tool-x")
    assert programs.find("tool-x", str(folder), extra=[tmp_path / "cache"]) is None
