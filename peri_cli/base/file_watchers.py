"""Peri's own file reads and writes, and its starting a process outside the sandbox, announced to
whoever guards the workspace (the Bash sandbox's protected-path check, `sandbox/guard.py`).

`safe_read` asks before each read (a watcher may refuse a file it holds back: one git changed
under a sandboxed command, not confirmed yet), `atomic_write` tells after each write (Peri's own
write to a protected path is not a sandboxed command's plant), and hooks, MCP servers and the
status line say before they start (what a command left is judged first). A process may run
several sessions (the SDK): each watcher judges only the paths of its own workspace."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol


class FileWatcher(Protocol):
    def before_read(self, path: Path) -> str | None:
        """Why `path` must not be read now (None: read it)."""
        ...

    def after_write(self, path: Path) -> None: ...

    def before_outside(self) -> None:
        """A process is about to start outside the sandbox."""
        ...


_WATCHERS: list[FileWatcher] = []
_LOCK = threading.Lock()


def add(watcher: FileWatcher) -> None:
    with _LOCK:
        _WATCHERS.append(watcher)


def remove(watcher: FileWatcher) -> None:
    with _LOCK:
        if watcher in _WATCHERS:
            _WATCHERS.remove(watcher)


def _all() -> list[FileWatcher]:
    with _LOCK:
        return list(_WATCHERS)


def before_read(path: Path) -> str | None:
    for watcher in _all():
        if (why := watcher.before_read(path)) is not None:
            return why
    return None


def after_write(path: Path) -> None:
    for watcher in _all():
        watcher.after_write(path)


def before_outside() -> None:
    for watcher in _all():
        watcher.before_outside()
