"""Where Peri finds the programs it runs outside the sandbox: its own (`bwrap`, `socat`, the hook
shell, `git`, `rg`) and the interpreter a hook or MCP server command starts with. Only in PATH
entries that no sandboxed command can write (`exec_path`), so that a `bwrap` or `bash` a command
planted in an activated `.venv/bin` is never what runs.

The folders sandboxed commands may write are kept here for the whole process, as PATH is: the
runtime names its workspace at start and its sandbox's writable folders (the session's TMPDIR,
`allowWrite`) once they are known. A folder any session's commands may write is trusted by none.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from peri_cli.base.exec_path import INTERPRETERS, split_path, writable_last


class ProgramMissing(LookupError):
    """A program to run is found only where sandboxed commands can write (or nowhere)."""


_LOCK = threading.Lock()
_ROOTS: dict[int, tuple[Path, ...]] = {}  # by the id of whoever named them


def guard(owner: object, roots: Iterable[Path]) -> None:
    """Record the folders `owner`'s sandboxed commands may write (replacing what it said)."""
    with _LOCK:
        _ROOTS[id(owner)] = tuple(roots)


def release(owner: object) -> None:
    with _LOCK:
        _ROOTS.pop(id(owner), None)


def writable_roots(extra: Iterable[Path] = ()) -> tuple[Path, ...]:
    """Every folder a sandboxed command of this process may write, and `extra`."""
    with _LOCK:
        known = [root for roots in _ROOTS.values() for root in roots]
    return tuple(dict.fromkeys([*known, *extra]))


def _path(path: str | None) -> str:
    return os.environ.get("PATH", os.defpath) if path is None else path


def find(name: str, path: str | None = None, *, extra: Iterable[Path] = ()) -> str | None:
    """The full path of program `name` in the entries of `path` (default: Peri's PATH) that no
    sandboxed command can write (nor one that may write `extra`); None if none has it."""
    safe, _ = split_path(_path(path), writable_roots(extra))
    return shutil.which(name, path=os.pathsep.join(safe)) if safe else None


def child_path(path: str | None = None, *, extra: Iterable[Path] = ()) -> str:
    """PATH for a process Peri starts outside the sandbox: the entries a sandboxed command can
    write moved last."""
    return writable_last(_path(path), writable_roots(extra))


def with_child_path(env: Mapping[str, str], *, extra: Iterable[Path] = ()) -> dict[str, str]:
    """`env` with its PATH as `child_path` makes it."""
    return {**env, "PATH": child_path(env.get("PATH", os.defpath), extra=extra)}


def only_where_writable(
    name: str, path: str | None = None, *, extra: Iterable[Path] = ()
) -> list[str]:
    """The PATH entries holding `name` that sandboxed commands can write (where `find` skips)."""
    _, writable = split_path(_path(path), writable_roots(extra))
    return [e or "." for e in writable if shutil.which(name, path=e or ".")]


def missing(name: str, path: str | None = None, *, extra: Iterable[Path] = ()) -> str:
    """Why `name` cannot be run, for a message."""
    there = only_where_writable(name, path, extra=extra)
    if there:
        return (
            f"{name} is on PATH only in folders that sandboxed commands can write "
            f"({', '.join(there)}); install it elsewhere or give its full path"
        )
    return f"{name} was not found on PATH"


_FIRST_WORD = re.compile(r"\s*([A-Za-z0-9_.+-]+)(?=\s|$)")


def interpreter_command(
    command: str, path: str | None = None, *, extra: Iterable[Path] = ()
) -> str:
    """A hook's shell command with its first word, when that is an interpreter (`python3 x.py`,
    `bash x.sh`, `env ...`), replaced by the interpreter's full path as `find` gives it.
    ProgramMissing (with `missing`'s words) when it is found only where commands can write."""
    match = _FIRST_WORD.match(command)
    if match is None or match.group(1) not in INTERPRETERS:
        return command
    found = find(match.group(1), path, extra=extra)
    if found is None:
        raise ProgramMissing(missing(match.group(1), path, extra=extra))
    return command[: match.start(1)] + shlex.quote(found) + command[match.end(1) :]


def interpreter_program(
    program: str, path: str | None = None, *, extra: Iterable[Path] = ()
) -> str:
    """An MCP server's `command` the same way: an interpreter's name becomes its full path."""
    if program not in INTERPRETERS:
        return program
    found = find(program, path, extra=extra)
    if found is None:
        raise ProgramMissing(missing(program, path, extra=extra))
    return found
