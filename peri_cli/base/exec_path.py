"""Which PATH entries a sandboxed command could write, so that a program it planted there would
shadow a real one (an activated `.venv/bin` is in the workspace), and PATH with those entries
moved last. Stdlib only; nothing is read but symlinks."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

# The first words of a hook, MCP server or status line command that are always found outside
# those folders: the interpreter that runs the rest.
INTERPRETERS = frozenset({"bash", "sh", "env", "python3", "python", "node"})


def _places(path: str, depth: int = 0) -> list[str]:
    """`path` and every path its symlinks lead through, to the real one: a command that may
    write where any of them is could replace a link on the way."""
    path = os.path.normpath(path)
    current = os.sep
    parts = [p for p in path.split(os.sep) if p]
    for i, part in enumerate(parts):
        current = os.path.join(current, part)
        if depth < 40 and os.path.islink(current):
            try:
                target = os.path.join(os.path.dirname(current), os.readlink(current))
            except OSError:
                break
            return [path, *_places(os.path.join(target, *parts[i + 1 :]), depth + 1)]
    return [path]


def _forms(path: str) -> set[str]:
    """A root as written and with symlinks resolved (a sandbox mounts the real path)."""
    return {os.path.normpath(path), os.path.realpath(path)}


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def within_any(path: str | Path, roots: Iterable[Path]) -> bool:
    """Whether `path`, or a place its symlinks lead through, is at or under one of `roots`."""
    places = _places(str(path))
    return any(_within(p, r) for root in roots for r in _forms(str(root)) for p in places)


def writable_entry(entry: str, roots: Iterable[Path]) -> bool:
    """Whether a command that may write under `roots` could put a program into the PATH entry
    `entry`: an empty or relative entry (it names the working directory: the workspace), or one
    at or under a root."""
    return not entry or not os.path.isabs(entry) or within_any(entry, roots)


def split_path(path: str, roots: Iterable[Path]) -> tuple[list[str], list[str]]:
    """PATH's entries, in order: (those no such command can write, those it can)."""
    roots = tuple(roots)
    safe: list[str] = []
    writable: list[str] = []
    for entry in path.split(os.pathsep):
        (writable if writable_entry(entry, roots) else safe).append(entry)
    return safe, writable


def writable_last(path: str, roots: Iterable[Path]) -> str:
    """PATH with the entries a sandboxed command can write moved after all the others: a name
    planted there cannot shadow a system program, and the project's own tools still resolve."""
    safe, writable = split_path(path, roots)
    return os.pathsep.join([*safe, *writable])


def first_inside(places: Iterable[Path], roots: Iterable[Path]) -> Path | None:
    """The first of `places` (where Peri's interpreter and code live) that a sandboxed command
    could change, if any."""
    roots = tuple(roots)
    return next((p for p in places if within_any(p, roots)), None)
