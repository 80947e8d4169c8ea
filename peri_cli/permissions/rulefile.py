"""Adding rules to `.peri/settings.local.json` ("always allow in this project").

The user's other keys stay as they were, the file is replaced atomically under a lock (two
processes adding rules at once both land), and `.peri/.gitignore` keeps the personal file out of
the repository. A file that cannot be read as a JSON object is never overwritten.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from peri_cli.base import file_watchers
from peri_cli.base.atomic import atomic_write
from peri_cli.base.textsafe import visible
from peri_cli.permissions.rule_syntax import Behavior, RuleError, RuleSource, parse_rule

PROJECT_DIR = ".peri"
LOCAL_SETTINGS_FILE = "settings.local.json"
MAX_BYTES = 1 << 20


class RuleFileError(Exception):
    """The rule could not be saved; one line for the user, the file left as it was."""


def local_settings_path(workspace: Path) -> Path:
    return workspace / PROJECT_DIR / LOCAL_SETTINGS_FILE


def add_rules(workspace: Path, rules: Sequence[str], behavior: Behavior = "allow") -> Path:
    """Append `rules` (those not already there) to `permissions.<behavior>` of the workspace's
    `.peri/settings.local.json`, creating it; return the file's path."""
    source = RuleSource("local", str(local_settings_path(workspace)))
    for text in rules:
        try:
            parse_rule(text, behavior, source)
        except RuleError as e:
            raise RuleFileError(visible(str(e))) from e
    folder = _project_folder(workspace)
    path = folder / LOCAL_SETTINGS_FILE

    def append(data: dict[str, Any]) -> None:
        permissions = data.setdefault("permissions", {})
        if not isinstance(permissions, dict):
            raise RuleFileError(f"{path}: permissions is not an object; not changed")
        listed = permissions.setdefault(behavior, [])
        if not isinstance(listed, list):
            raise RuleFileError(f"{path}: permissions.{behavior} is not a list; not changed")
        for text in rules:
            if text.strip() not in listed:
                listed.append(text.strip())

    edit_settings_file(path, append)
    ensure_git_ignored(folder)
    return path


def edit_settings_file(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Read `path` as a JSON object (missing: {}), let `change` edit it in place, and replace the
    file atomically, all under a lock on its folder, so two processes editing at once both land.
    A file that is not a regular JSON object is left alone (RuleFileError)."""
    with _locked(path.parent):
        data = _read_object(path)
        change(data)
        _write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _project_folder(workspace: Path) -> Path:
    """`.peri/`, created when missing; refused when it is a link or leads out of the workspace."""
    folder = workspace / PROJECT_DIR
    try:
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise RuleFileError(f"{folder}: not a plain folder; rule not saved")
        folder.mkdir(exist_ok=True)
    except OSError as e:
        raise RuleFileError(f"{folder}: cannot create ({e.strerror or e})") from e
    if folder.resolve() != workspace.resolve() / PROJECT_DIR:
        raise RuleFileError(f"{folder}: leads outside the workspace; rule not saved")
    return folder


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _read_object(path: Path) -> dict[str, Any]:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise RuleFileError(f"{path}: cannot read ({e.strerror or e})") from e
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise RuleFileError(f"{path}: not a regular file; not changed")
    if info.st_size > MAX_BYTES:
        raise RuleFileError(f"{path}: larger than {MAX_BYTES} bytes; not changed")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            text = f.read(MAX_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RuleFileError(f"{path}: cannot read ({e}); not changed") from e
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise RuleFileError(f"{path}: not valid JSON; not changed") from e
    if not isinstance(data, dict):
        raise RuleFileError(f"{path}: not a JSON object; not changed")
    return data


def _write_atomically(path: Path, text: str) -> None:
    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as e:
        raise RuleFileError(f"{path}: cannot write ({e.strerror or e}); not changed") from e


def ensure_git_ignored(folder: Path) -> None:
    """`.peri/.gitignore` names the personal settings file (added when missing; a link or a
    special file there is left alone)."""
    ignore = folder / ".gitignore"
    try:
        if ignore.is_symlink() or (ignore.exists() and not ignore.is_file()):
            return
        lines = ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []
        if any(line.strip() in (LOCAL_SETTINGS_FILE, "/" + LOCAL_SETTINGS_FILE) for line in lines):
            return
        with ignore.open("a", encoding="utf-8") as f:
            if lines and not ignore.read_text(encoding="utf-8").endswith("\n"):
                f.write("\n")
            f.write(LOCAL_SETTINGS_FILE + "\n")
    except (OSError, UnicodeDecodeError):
        return  # the rule is saved; an unwritable .gitignore does not undo it
    file_watchers.after_write(ignore)  # Peri's own write (a sandboxed command may be running)
