"""The walk finds the workspace's protected paths (bounded), the check finds what changed, and
the policy binds what was found read-only (issue 37 items 2 and 3)."""

from __future__ import annotations

import os
from pathlib import Path

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import Protected, SandboxPlaces, build_policy
from peri_cli.sandbox import bwrap, protected
from peri_cli.sandbox.protected import Change, check, walk


def _git(path: Path) -> Path:
    (path / "hooks").mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text("")
    (path / "objects").mkdir()
    return path


def _tree(ws: Path) -> None:
    _git(ws / ".git")
    (ws / ".git" / "info").mkdir()
    (ws / ".git" / "info" / "attributes").write_text("")
    (ws / ".git" / "worktrees" / "w").mkdir(parents=True)
    (ws / ".git" / "worktrees" / "w" / "gitdir").write_text("/x\n")
    _git(ws / "vendor" / "lib" / ".git")
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")  # a submodule's checkout
    _git(ws / ".git" / "modules" / "sub")
    _git(ws / ".git" / "modules" / "group" / "deep")  # a module name with a slash
    _git(ws / ".git" / "modules" / "sub" / "modules" / "inner")  # a submodule's submodule
    (ws / "a" / "b" / ".claude").mkdir(parents=True)
    (ws / "a" / ".mcp.json").write_text("{}")
    (ws / ".agents").mkdir()
    _git(ws / "node_modules" / "pkg" / ".git")  # installed packages are not walked
    (ws / "node_modules" / ".mcp.json").write_text("{}")
    _git(ws.joinpath(*"abcdefgh") / ".git")  # deeper than the cap


def test_the_walk_finds_protected_paths_and_git_redirections(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    tree = walk(ws)
    rel = {p.relative_to(ws).as_posix() for p in tree.paths}
    assert rel == {
        ".git",
        ".git/config",
        ".git/hooks",
        ".git/info/attributes",
        ".git/worktrees/w/gitdir",
        ".git/modules/sub",
        ".git/modules/sub/config",
        ".git/modules/sub/hooks",
        ".git/modules/group/deep",
        ".git/modules/group/deep/config",
        ".git/modules/group/deep/hooks",
        ".git/modules/sub/modules/inner",
        ".git/modules/sub/modules/inner/config",
        ".git/modules/sub/modules/inner/hooks",
        "vendor/lib/.git",
        "vendor/lib/.git/config",
        "vendor/lib/.git/hooks",
        "sub/.git",
        "a/b/.claude",
        "a/.mcp.json",
        ".agents",
    }
    assert {p.relative_to(ws).as_posix() for p in tree.git_dirs} == {
        ".git",
        ".git/modules/sub",
        ".git/modules/group/deep",
        ".git/modules/sub/modules/inner",
        "vendor/lib/.git",
    }
    assert tree.roots == {ws, ws / "vendor" / "lib", ws / "sub"}
    assert ws / ".git" / "objects" not in tree.folders  # git's own files are not looked at


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for i in range(50):
        (ws / f"d{i:02}").mkdir(parents=True)
    (ws / "d49" / ".claude").mkdir()
    assert ws / "d49" / ".claude" in walk(ws).paths
    deep = ws.joinpath(*(f"l{i}" for i in range(protected.MAX_DEPTH + 1)))
    deep.mkdir(parents=True)
    (deep / ".mcp.json").write_text("{}")
    (deep.parent / ".mcp.json").write_text("{}")
    found = walk(ws).paths
    assert deep.parent / ".mcp.json" in found and deep / ".mcp.json" not in found


def test_the_check_finds_what_appeared_or_was_replaced(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    tree = walk(ws)
    assert check(tree) == []
    (ws / ".mcp.json").write_text("{}")  # a new name in a known folder
    (ws / "new" / "deep").mkdir(parents=True)
    (ws / "new" / "deep" / ".peri").mkdir()  # in a new folder
    (ws / ".git" / "commondir").write_text("../evil\n")  # a redirection in a git folder
    (ws / ".git" / "worktrees" / "w" / "commondir").write_text("/x\n")
    os.rename(ws / "a", ws / "a2")  # a known one renamed away with its folder...
    (ws / "a" / "b" / ".claude").mkdir(parents=True)  # ...and another put in its place
    (ws / "objects-like").mkdir()
    (ws / ".git" / "objects" / "ab").mkdir()  # git's own writes are not looked at
    got = {(c.path.relative_to(ws).as_posix(), c.how) for c in check(tree)}
    assert got == {
        (".mcp.json", "new"),
        ("new/deep/.peri", "new"),
        (".git/commondir", "new"),
        (".git/worktrees/w/commondir", "new"),
        ("a/b/.claude", "replaced"),
        ("a2/b/.claude", "new"),
        ("a2/.mcp.json", "new"),
    }
    assert check(tree) == []  # each change is told once


def test_a_new_git_folder_is_one_change(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tree = walk(ws)
    _git(ws / "fresh" / ".git")
    git = ws / "fresh" / ".git"
    assert set(check(tree)) == {
        Change(git, "new", git_dir=True),
        Change(git / "config", "new"),
        Change(git / "hooks", "new"),
    }
    assert git in tree.git_dirs and ws / "fresh" in tree.roots


def test_what_was_found_is_bound_read_only_and_missing_files_get_no_stand_in(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    tree = walk(ws)
    (tmp_path / "t").mkdir()
    found = Protected(tuple(tree.paths), tuple(tree.git_dirs), tuple(tree.roots))
    places = SandboxPlaces(ws, tmp_path / "h", tmp_path / "h/.peri", tmp_path / "t", {}, found)
    p = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    for rel in ("vendor/lib/.git", ".git/modules/sub", ".git/modules/sub/modules/inner"):
        assert p.governing(ws / rel / "hooks" / "pre-commit") == "protected", rel
        assert p.governing(ws / rel / "config") == "protected", rel
        assert p.governing(ws / rel / "objects") == "pin", rel  # the rest stays writable
    assert p.governing(ws / "a" / "b" / ".claude" / "settings.json") == "protected"
    assert p.governing(ws / ".git" / "info" / "attributes") == "protected"
    assert p.governing(ws / ".claude" / "x") == "read_only"  # a missing folder at the root
    assert p.governing(ws / "vendor" / "lib" / ".peri" / "x") == "read_only"  # a repo's root
    assert p.governing(ws / "a" / ".peri" / "x") == "writable"  # no stand-in elsewhere...
    assert p.governing(ws / ".mcp.json") == "writable"  # ...nor for a missing file
    empty = tmp_path / "e"
    plan = bwrap.build(p, ["true"], {}, ws, empty_dir=empty)
    argv = " ".join(plan.argv)
    assert f"--ro-bind {ws}/vendor/lib/.git/hooks {ws}/vendor/lib/.git/hooks" in argv
    assert f"--ro-bind {ws}/.git/modules/sub/config {ws}/.git/modules/sub/config" in argv
    assert f"--ro-bind {ws}/sub/.git {ws}/sub/.git" in argv  # a submodule's `.git` file
    assert f"--ro-bind {empty} {ws}/.claude" in argv
    assert "/dev/null" not in argv
    assert all(path.name in (".peri", ".claude", ".agents") for path in plan.created)
