"""Where the workspace's protected paths are, and which of them changed: the session-start walk
and the check after each sandboxed command run on one `Tree`.

Protected: `.peri`, `.claude`, `.agents`, `.mcp.json` and `.git` wherever the walk reaches, and
in each git folder (the workspace's, a nested repository's, a submodule's under `.git/modules`)
what redirects or runs git: `config`, `hooks`, `commondir`, `config.worktree`,
`info/attributes` and `worktrees/*/{commondir, gitdir, config.worktree}`. Nothing else in a git
folder is looked at, so git's own writes there (index, objects, refs, a rebase in progress) cost
nothing.

The workspace can be a home folder or a monorepo of a million files, so the walk stops at
MAX_DEPTH levels, MAX_DIRS folders and MAX_ENTRIES names, never follows a link, and skips
folders that hold installed packages or build output (`node_modules`, `.venv`, ...). It keeps
each folder's inode and modification time: the check stats the known paths and folders and
lists again only the folders that changed (a new name changes its folder's mtime), walking the
new folders it finds there within the same caps.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from peri_cli.permissions.asking import PROTECTED_DIRS, PROTECTED_FILES

MAX_DEPTH = 6  # levels below the workspace
MAX_DIRS = 3000  # folders looked into, in all
MAX_ENTRIES = 20000  # names read, in all (a folder of 100,000 files costs as much as its names)
MAX_GIT_DIRS = 64  # git folders guarded
MAX_PROTECTED = 512  # protected paths bound read-only
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
PROTECTED_NAMES = frozenset(n.casefold() for n in (*PROTECTED_DIRS, *PROTECTED_FILES))
GIT = ".git"
IN_GIT_DIR = frozenset({"config", "hooks", "commondir", "config.worktree"})
IN_WORKTREE = frozenset({"commondir", "gitdir", "config.worktree"})

# What a folder is to the walk: an ordinary one (listed for protected names and subfolders), a
# git folder, its `info`, its `worktrees`, one worktree's folder, or a `modules` folder.
Role = Literal["plain", "git", "info", "worktrees", "worktree", "modules"]
# (device, inode, file type, size, mtime in ns): what "changed" compares
Sig = tuple[int, int, int, int, int]
How = Literal["new", "replaced", "changed"]
Item = tuple[Path, Role, int, os.stat_result]  # a folder to list: where, its role, its depth


@dataclass(frozen=True)
class Folder:
    ino: int
    mtime_ns: int
    role: Role
    depth: int


@dataclass(frozen=True)
class Change:
    path: Path
    how: How  # new: not there before; replaced: another file now; changed: the same, edited
    git_dir: bool = False  # a git folder (a new repository, or a submodule's)


@dataclass
class Tree:
    """What the walk knows about one workspace."""

    workspace: Path
    paths: dict[Path, Sig] = field(default_factory=dict)  # protected paths that exist
    folders: dict[Path, Folder] = field(default_factory=dict)  # each folder looked into
    git_dirs: set[Path] = field(default_factory=set)
    roots: set[Path] = field(default_factory=set)  # nested repositories' folders

    def learn(self, path: Path) -> None:
        """`path` as it is now (Peri wrote it, or judged a change): no change next check."""
        info = _lstat(path)
        if info is None:
            self.forget(path)
        elif path in self.paths or _protected_name(path.name):
            self.paths[path] = _sig(info)

    def forget(self, path: Path) -> None:
        """`path` and all below it are gone (moved aside)."""
        for known in [p for p in self.paths if p == path or path in p.parents]:
            del self.paths[known]
        for folder in [f for f in self.folders if f == path or path in f.parents]:
            del self.folders[folder]
        self.git_dirs = {g for g in self.git_dirs if not (g == path or path in g.parents)}
        if path.name == GIT:
            self.roots.discard(path.parent)  # no longer a repository's folder


def walk(workspace: Path) -> Tree:
    """The protected paths in `workspace` as the session starts."""
    tree = Tree(workspace)
    info = _lstat(workspace)
    if info is not None and stat.S_ISDIR(info.st_mode):
        _Walker(tree, None).run([(workspace, "plain", 0, info)])
    return tree


def check(tree: Tree) -> list[Change]:
    """What changed since the tree was last looked at (it is updated to now): known paths by
    their stat, and new protected names in the folders whose mtime or inode moved."""
    changes: list[Change] = []
    for path, sig in list(tree.paths.items()):
        info = _lstat(path)
        if info is None:
            del tree.paths[path]  # gone (a command cannot remove what is bound; the user can)
            continue
        now = _sig(info)
        if now != sig:
            tree.paths[path] = now
            same = now[:3] == sig[:3]
            if same and path in tree.git_dirs:
                continue  # git writes its folder all the time; what matters in it is listed
            changes.append(Change(path, "changed" if same else "replaced", path in tree.git_dirs))
    stale: list[Item] = []
    for path, folder in list(tree.folders.items()):
        info = _lstat(path)
        if info is None or not stat.S_ISDIR(info.st_mode):
            del tree.folders[path]
        elif (info.st_ino, info.st_mtime_ns) != (folder.ino, folder.mtime_ns):
            stale.append((path, folder.role, folder.depth, info))
    if stale:
        _Walker(tree, changes).run(stale)
    return changes


class _Walker:
    """A breadth-first walk from some folders, within the caps; `changes`: where what it finds
    that was not known is recorded (None: the first walk, which records nothing)."""

    def __init__(self, tree: Tree, changes: list[Change] | None) -> None:
        self.tree = tree
        self.changes = changes
        self.names = MAX_ENTRIES

    def run(self, start: list[Item]) -> None:
        """List each folder of `start`, then the folders found below them that are new or
        changed (a known folder that did not change is not listed again)."""
        queue: deque[tuple[Item, bool]] = deque((item, True) for item in start)
        folders = self.tree.folders
        while queue and self.names > 0:
            (folder, role, depth, info), forced = queue.popleft()
            known = folders.get(folder)
            if known is None and len(folders) >= MAX_DIRS:
                continue
            unchanged = known is not None and (known.ino, known.mtime_ns) == (
                info.st_ino,
                info.st_mtime_ns,
            )
            if unchanged and not forced:
                continue
            folders[folder] = Folder(info.st_ino, info.st_mtime_ns, role, depth)
            for item in self._list(folder, role, depth):
                queue.append((item, False))

    def _list(self, folder: Path, role: Role, depth: int) -> list[Item]:
        out: list[Item] = []
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    self.names -= 1
                    if self.names < 0:
                        break
                    if role == "plain":
                        out.extend(self._plain(folder, depth, entry))
                    else:
                        out.extend(self._in_git(role, depth, entry))
        except OSError:
            return out
        return out

    def _plain(self, folder: Path, depth: int, entry: os.DirEntry[str]) -> list[Item]:
        """Record `entry` if protected; the folder to walk below it, if any."""
        name = entry.name
        if _protected_name(name):
            info = _lstat(Path(entry.path))
            if info is None:
                return []
            git = name.casefold() == GIT and stat.S_ISDIR(info.st_mode)
            self._found(Path(entry.path), info, git_dir=git)
            if name.casefold() == GIT:
                self.tree.roots.add(folder)
            return [(Path(entry.path), "git", depth, info)] if git else []
        if depth < MAX_DEPTH and name not in SKIPPED and _is_dir(entry):
            info = _lstat(Path(entry.path))
            return [] if info is None else [(Path(entry.path), "plain", depth + 1, info)]
        return []

    def _in_git(self, role: Role, depth: int, entry: os.DirEntry[str]) -> list[Item]:
        name, path = entry.name, Path(entry.path)
        wanted = (
            (role == "git" and name in IN_GIT_DIR)
            or (role == "info" and name == "attributes")
            or (role == "worktree" and name in IN_WORKTREE)
        )
        folder_role = _FOLDER_ROLES.get((role, name)) or _FOLDER_ROLES.get((role, "*"))
        if not wanted and (folder_role is None or not _is_dir(entry)):
            return []
        info = _lstat(path)
        if info is None:
            return []
        if wanted or folder_role is None:
            self._found(path, info)
            return []
        if folder_role != "modules":
            return [(path, folder_role, depth, info)]
        if depth >= MAX_DEPTH:
            return []
        if (path / "HEAD").is_file():  # a submodule's git folder (names may hold slashes)
            self._found(path, info, git_dir=True)
            return [(path, "git", depth + 1, info)]
        return [(path, "modules", depth + 1, info)]

    def _found(self, path: Path, info: os.stat_result, *, git_dir: bool = False) -> None:
        tree = self.tree
        if path in tree.paths:
            return
        if len(tree.paths) >= MAX_PROTECTED or (git_dir and len(tree.git_dirs) >= MAX_GIT_DIRS):
            return
        tree.paths[path] = _sig(info)
        if git_dir:
            tree.git_dirs.add(path)
        if self.changes is not None:
            self.changes.append(Change(path, "new", git_dir))


# The folders inside a git folder the walk goes into: (the folder's role, a name) -> its role
_FOLDER_ROLES: dict[tuple[Role, str], Role] = {
    ("git", "info"): "info",
    ("git", "worktrees"): "worktrees",
    ("git", "modules"): "modules",
    ("worktrees", "*"): "worktree",
    ("modules", "*"): "modules",
}


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)  # a link could lead out of the workspace
    except OSError:
        return False


def _protected_name(name: str) -> bool:
    return name.casefold() in PROTECTED_NAMES


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None


def _sig(info: os.stat_result) -> Sig:
    kind = stat.S_IFMT(info.st_mode)
    size = 0 if kind == stat.S_IFDIR else info.st_size  # a folder's size says little
    return (info.st_dev, info.st_ino, kind, size, info.st_mtime_ns)
