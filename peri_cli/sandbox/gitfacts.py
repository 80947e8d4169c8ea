"""What git says about what a sandboxed command left: which protected files it tracks (a
checkout put them there: they stay, held back), and whether a new git folder runs commands
when git runs in it (its config's command keys, its hooks).

Git runs outside the sandbox here, in a repository whose `config` and `hooks` were bound
read-only while the command ran, with fsmonitor and hooks switched off all the same."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from peri_cli.base.safe_read import SafeReadError, read_text

GIT_TIMEOUT = 10.0
_SAFE = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
# Keys whose value git runs as a command (or that pull in more config that may)
_COMMAND_KEYS = frozenset(
    {
        "core.fsmonitor",
        "core.hookspath",
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.askpass",
        "sequence.editor",
        "gpg.program",
        "credential.helper",
        "include.path",
    }
)
_DRIVERS = {"diff": ("command", "textconv"), "filter": ("clean", "smudge", "process")}
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def tracked(repo: Path, paths: Iterable[Path], git: str = "git") -> set[Path]:
    """The files among or under `paths` that the repository at `repo` tracks (its index)."""
    rels = [os.path.relpath(p, repo) for p in paths]
    if not rels:
        return set()
    try:
        done = subprocess.run(
            [git, *_SAFE, "-C", str(repo), "ls-files", "-z", "--", *rels],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return set()
    if done.returncode != 0:
        return set()
    names = done.stdout.decode(errors="surrogateescape").split("\0")
    return {repo / name for name in names if name}


def runs_commands(git_dir: Path) -> list[str]:
    """What in a git folder makes git run a command: `section.key` of its config (an alias
    starting with `!`, a diff, filter or merge driver, the keys of `_COMMAND_KEYS`) and the
    hooks that are not samples."""
    found = _config_commands(git_dir / "config")
    try:
        hooks = sorted(
            e.name
            for e in os.scandir(git_dir / "hooks")
            if not e.name.endswith(".sample") and not e.is_dir(follow_symlinks=False)
        )
    except OSError:
        hooks = []
    return found + [f"hooks/{name}" for name in hooks]


def _config_commands(path: Path) -> list[str]:
    try:
        text = read_text(path)
    except SafeReadError:
        return []
    found: list[str] = []
    section, sub = "", None
    for raw in text.splitlines():
        body = raw.split("#", 1)[0].split(";", 1)[0] if '"' not in raw else raw
        if (head := _SECTION.match(body)) is not None:
            section, sub = head.group(1).lower(), head.group(2)
            body = head.group(3)
            if section.startswith("includeif"):
                found.append(f"{section} (includes more config)")
        if (pair := _KEY.match(body)) is None or not section:
            continue
        key, value = pair.group(1).lower(), (pair.group(2) or "").strip().strip('"')
        name = f"{section}.{sub}.{key}" if sub is not None else f"{section}.{key}"
        if _runs(section, sub, key, value):
            found.append(f"{name} = {value}" if value else name)
    return list(dict.fromkeys(found))


def _runs(section: str, sub: str | None, key: str, value: str) -> bool:
    if f"{section}.{key}" in _COMMAND_KEYS:
        return True
    if section == "alias":
        return value.startswith("!")
    if section == "merge" and sub is not None:
        return key == "driver"
    return sub is not None and key in _DRIVERS.get(section, ())
