"""Reading a sandboxed command's output for what the sandbox refused, so the result says so
("write outside the workspace denied by the sandbox: /etc/x") and the model can ask for it.

Programs report a refused write as EROFS, EACCES or EPERM next to the path; a hidden path reads
as missing or empty. Only paths the policy really holds are named: an ordinary "Permission
denied" inside the workspace stays the program's own business.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from peri_cli.permissions.sandbox_policy import SandboxPolicy

_ERRORS = (
    "Read-only file system",
    "Permission denied",
    "Operation not permitted",
    "No such file or directory",
    "Connection refused",
    "Device or resource busy",  # a rename onto a guarded file (git writes config.lock, renames)
)
# `tool: 'path': error`, `bash: path: error`, `cannot touch 'path': error`, `open("path"): error`
_PATH = re.compile(
    r"""(?:^|[\s:(`'"])(?P<q>['"`]?)(?P<path>[~./]?[^\s'"`:()]*/?[^\s'"`:()]+)(?P=q)\)?"""
    r""":\s*(?:\[Errno \d+\]\s*)?(?P<error>""" + "|".join(_ERRORS) + ")",
    re.MULTILINE,
)
MAX_NOTES = 5


def explain(policy: SandboxPolicy, output: str, cwd: Path) -> str | None:
    """One line per path the sandbox refused, or None when nothing in `output` was its doing."""
    notes: list[str] = []
    for match in _PATH.finditer(output):
        path = _absolute(match.group("path"), cwd, policy)
        if path is None:
            continue
        note = _note(policy, path, match.group("error"))
        if note is not None and note not in notes:
            notes.append(note)
        if len(notes) >= MAX_NOTES:
            break
    if not notes:
        return None
    return "\n".join(
        [*notes, "The sandbox held these; ask the user to allow the path if it is needed."]
    )


def _absolute(text: str, cwd: Path, policy: SandboxPolicy) -> Path | None:
    if text.startswith("~"):
        return None  # the shell expands `~` before a program sees it
    path = Path(text)
    if not path.is_absolute():
        if "/" not in text and "." not in text:
            return None  # a bare word ("bash", "touch") is a program's name, not a path
        path = cwd / path
    return Path(os.path.normpath(path))


def _note(policy: SandboxPolicy, path: Path, error: str) -> str | None:
    kind = policy.governing(path)
    if kind == "hidden":
        return f"read denied by the sandbox (a protected secret): {path}"
    if error in {"Connection refused", "No such file or directory"}:
        if kind == "mask":
            return f"host socket or temporary file hidden by the sandbox: {path}"
        return None
    if kind in ("writable", "socket", "reveal"):
        return None
    if kind == "read_only" and _within(path, policy.workspace):
        return f"write to a protected path denied by the sandbox: {path}"
    if kind == "read_only":
        return f"write denied by the sandbox (read-only): {path}"
    return f"write outside the workspace denied by the sandbox: {path}"


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
