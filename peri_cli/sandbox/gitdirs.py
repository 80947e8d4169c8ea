"""The git folders inside a workspace besides its own `.git`: nested repositories
(`vendor/lib/.git`) and submodules' git folders (`.git/modules/<name>`), whose hooks and config
run code when the user's own git runs there, so the sandbox guards them like the workspace's.

Found once, as the sandbox is built, by a bounded walk: the sandbox is built as the session
starts, and a workspace can be a home folder or a monorepo of a million folders, so the walk
stops at MAX_DEPTH levels, MAX_DIRS folders and MAX_ENTRIES names, and skips folders that hold
installed packages or build output (`node_modules`, `.venv`, ...). A repository past the cap is
not guarded; one a command creates later is not either (it is the command's own, its hooks
planted by it).
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

MAX_DEPTH = 6  # levels below the workspace
MAX_DIRS = 3000  # folders looked into, in all
MAX_ENTRIES = 20000  # names read, in all (a folder of 100,000 files costs as much as its names)
MAX_FOUND = 64  # git folders guarded
SKIPPED = frozenset(
    {
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        "target",
        ".gradle",
        ".next",
    }
)


def nested_git_dirs(
    workspace: Path, *, max_dirs: int = MAX_DIRS, max_entries: int = MAX_ENTRIES
) -> tuple[Path, ...]:
    """The git folders to guard: each nested repository's `.git` (a folder, or the file a
    submodule's checkout has) and each submodule's folder under a `.git/modules`."""
    found: list[Path] = []
    budget = [max_dirs, max_entries]
    _modules(workspace / ".git", found, budget)
    queue: deque[tuple[Path, int]] = deque([(workspace, 0)])
    while queue and min(budget) > 0 and len(found) < MAX_FOUND:
        folder, depth = queue.popleft()
        for entry in _entries(folder, budget):
            if entry.name == ".git":
                if folder != workspace:
                    found.append(Path(entry.path))
                    _modules(Path(entry.path), found, budget)
            elif depth < MAX_DEPTH and entry.name not in SKIPPED and _is_dir(entry):
                queue.append((Path(entry.path), depth + 1))
    return tuple(found[:MAX_FOUND])


def _modules(git_dir: Path, found: list[Path], budget: list[int]) -> None:
    """Submodules' git folders under `git_dir/modules` (names may hold slashes, and a
    submodule's own submodules sit in its `modules`): a folder with a HEAD file is one."""
    queue: deque[tuple[Path, int]] = deque([(git_dir / "modules", 0)])
    while queue and min(budget) > 0 and len(found) < MAX_FOUND:
        folder, depth = queue.popleft()
        for entry in _entries(folder, budget):
            if not _is_dir(entry) or depth >= MAX_DEPTH:
                continue
            path = Path(entry.path)
            if (path / "HEAD").is_file():
                found.append(path)
                queue.append((path / "modules", depth + 1))
            else:
                queue.append((path, depth + 1))


def _entries(folder: Path, budget: list[int]) -> list[os.DirEntry[str]]:
    """The names in `folder`, counted against the budget [folders, names] (cut at its end)."""
    budget[0] -= 1
    out: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                budget[1] -= 1
                if budget[1] < 0:
                    break
                out.append(entry)
    except OSError:
        return []
    return out


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)  # a link could lead out of the workspace
    except OSError:
        return False
