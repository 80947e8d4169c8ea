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
# `tool: 'path': error`, `bash: path: error`, `cannot touch 'path': error`, `open("path"): error`;
# GNU tools quote with ‘…’ in a UTF-8 locale
_PATH = re.compile(
    r"""(?:^|[\s:(`'"‘])(?P<q>['"`‘])?(?P<path>[~./]?[^\s'"`‘’:()]*/?[^\s'"`‘’:()]+)"""
    r"""(?(q)['"`’])\)?:\s*(?:\[Errno \d+\]\s*)?(?P<error>""" + "|".join(_ERRORS) + ")",
    re.MULTILINE,
)
# git naming a file it could not update (a checkout, a pull, `git config`)
_GIT_FAILED = re.compile(
    r"^(?:error|warning|fatal): (?:unable to unlink(?: old)?|unable to create file|cannot create"
    r" directory at|could not (?:write|lock) config file|unable to write file)"
    r" ['‘]?(?P<path>[^'’:\n]+?)['’]?(?::|$)",
    re.MULTILINE,
)
MAX_NOTES = 5
_CONFIG_NOTE = (
    "git could not write {path}: git's config is read-only inside the sandbox, so that no "
    "sandboxed command can set a command your own git runs (core.fsmonitor, core.hooksPath, "
    "an alias). Commands that change it (git remote add, git branch -u, git push -u, git "
    "checkout --track) fail here: tell the user to run this git command outside the sandbox."
)
_TREE_NOTE = (
    "git could not update the protected path {path}: it is read-only inside the sandbox, so "
    "the working tree may be only partly updated. Tell the user to run this git command "
    "outside the sandbox (in their own terminal)."
)


def explain(policy: SandboxPolicy, output: str, cwd: Path) -> str | None:
    """One line per path the sandbox refused, or None when nothing in `output` was its doing."""
    notes = _git_notes(policy, output, cwd)
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


def _git_notes(policy: SandboxPolicy, output: str, cwd: Path) -> list[str]:
    """What git could not update because the sandbox holds it, with what to do instead."""
    notes: list[str] = []
    for match in _GIT_FAILED.finditer(output):
        path = _absolute(match.group("path").strip(), cwd, policy)
        if path is None or policy.governing(path) not in ("read_only", "protected"):
            continue
        shown = os.path.relpath(path, policy.workspace) if _within(path, policy.workspace) else path
        git_config = path.name in ("config", "config.worktree") and ".git" in path.parts
        note = (_CONFIG_NOTE if git_config else _TREE_NOTE).format(path=shown)
        if note not in notes:
            notes.append(note)
    return notes[:MAX_NOTES]


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
    if kind in ("read_only", "protected") and _within(path, policy.workspace):
        return f"write to a protected path denied by the sandbox: {path}"
    if kind == "read_only":
        return f"write denied by the sandbox (read-only): {path}"
    return f"write outside the workspace denied by the sandbox: {path}"


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
