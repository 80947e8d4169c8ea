"""Nested repositories and submodules' git folders are found (bounded) and guarded like the
workspace's own `.git/hooks` and `.git/config`."""

from __future__ import annotations

from pathlib import Path

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import SandboxPlaces, build_policy
from peri_cli.sandbox import bwrap
from peri_cli.sandbox.gitdirs import nested_git_dirs


def _git(path: Path) -> Path:
    (path / "hooks").mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text("")
    return path


def _tree(ws: Path) -> None:
    _git(ws / ".git")
    _git(ws / "vendor" / "lib" / ".git")
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")  # a submodule's checkout
    _git(ws / ".git" / "modules" / "sub")
    _git(ws / ".git" / "modules" / "group" / "deep")  # a module name with a slash
    _git(ws / ".git" / "modules" / "sub" / "modules" / "inner")  # a submodule's submodule
    _git(ws / "node_modules" / "pkg" / ".git")  # installed packages are not walked
    _git(ws.joinpath(*"abcdefgh") / ".git")  # deeper than the cap


def test_nested_and_submodule_git_folders_are_found(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    found = set(nested_git_dirs(ws))
    assert found == {
        ws / "vendor/lib/.git",
        ws / "sub/.git",
        ws / ".git/modules/sub",
        ws / ".git/modules/group/deep",
        ws / ".git/modules/sub/modules/inner",
    }


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for i in range(50):
        (ws / f"d{i}").mkdir(parents=True)
    _git(ws / "d49" / ".git")
    assert nested_git_dirs(ws) == (ws / "d49/.git",)
    # Out of budget the walk stops before it reaches d49 (it does not hang).
    assert nested_git_dirs(ws, max_dirs=10) == ()
    assert nested_git_dirs(ws, max_entries=20) == ()


def test_their_hooks_and_config_are_read_only_in_bwrap(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    (tmp_path / "t").mkdir()
    places = SandboxPlaces(
        ws, tmp_path / "h", tmp_path / "h/.peri", tmp_path / "t", {}, nested_git_dirs(ws)
    )
    p = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    for rel in ("vendor/lib/.git", ".git/modules/sub", ".git/modules/sub/modules/inner"):
        assert p.governing(ws / rel / "hooks" / "pre-commit") == "read_only", rel
        assert p.governing(ws / rel / "config") == "read_only", rel
        assert p.governing(ws / rel / "objects") == "pin", rel  # the rest stays writable
    argv = " ".join(bwrap.build(p, ["true"], {}, ws, empty_dir=tmp_path / "e").argv)
    assert f"--ro-bind {ws}/vendor/lib/.git/hooks {ws}/vendor/lib/.git/hooks" in argv
    assert f"--ro-bind {ws}/.git/modules/sub/config {ws}/.git/modules/sub/config" in argv
    assert f"--ro-bind {ws}/sub/.git {ws}/sub/.git" in argv  # a submodule's `.git` file
