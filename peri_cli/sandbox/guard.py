"""The check after sandboxed commands: what they left in a protected path is moved aside, or
held back when git put it there, and said.

Protected paths that exist are bound read-only (`protected.py` finds them, the policy binds
them), but a missing file gets no stand-in and a folder can be renamed away with what it holds,
so after each command (every 2 s while one runs, before Peri starts a process outside the
sandbox or reads a protected file, and at the session's end) the tree is checked:

- a new or replaced protected path that git does not track is moved to
  `$PERI_HOME/refused/<session>/<its path>` (`aside.py`); one that cannot be moved stays, held;
- one git tracks (a checkout or a pull put it there) stays as git left it, held: Peri does not
  load it (`safe_read` refuses it) until the user confirms it (`release`);
- a new git folder (`git init`, `git clone`) stays, named when it runs commands.

Changes made while no sandboxed command ran (the user's, Peri's own writes, an approved
unsandboxed command) are taken as they are, and so is a file Peri writes itself (`after_write`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable
from pathlib import Path

from peri_cli.base import file_watchers
from peri_cli.permissions.asking import protected_path
from peri_cli.permissions.sandbox_policy import Protected
from peri_cli.sandbox import gitfacts
from peri_cli.sandbox.aside import NotMoved, move_aside
from peri_cli.sandbox.protected import GIT, Change, Tree, check, walk

TICK_SECONDS = 2.0  # how often the check runs while a sandboxed command does
MAX_FILES_SPLIT = 200  # files of a partly tracked folder judged one by one
FOOTER = (
    "A sandboxed command may not create or change protected paths (.peri, .claude, .agents, "
    ".mcp.json, and .git's config, hooks and redirections); ask the user when one is needed."
)
HELD = "Peri does not load it this session until the user confirms it"


class ProtectedGuard:
    """One workspace's protected paths across a session's sandboxed commands."""

    def __init__(
        self,
        workspace: Path,
        refused: Callable[[], Path | None] = lambda: None,
        *,
        on_report: Callable[[list[str]], None] = lambda lines: None,
        stubs: Callable[[], set[Path]] = set,
        git: str = "git",
        tick: float = TICK_SECONDS,
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self._refused = refused  # where this session keeps what it moves (None: nowhere)
        self._on_report = on_report  # the user's copy of each report
        self._stubs = stubs  # the stand-ins bubblewrap made for missing folders
        self._git = git
        self._tick = tick
        self._lock = threading.RLock()
        self.tree: Tree = walk(self.workspace)
        self.held: dict[Path, str] = {}  # held back: path -> why
        self._since: dict[Path, int] = {}  # learned mid-session: bound from this command on
        self._seq = itertools.count(1)
        self._next = 1
        self._running: dict[int, None] = {}  # commands running, by their number
        self._oldest: int | None = None  # the oldest command run since the last check
        self._checking = False
        self._notes: list[str] = []  # reports the model has not been given yet
        self._closed = threading.Event()
        self._ticker: threading.Thread | None = None
        file_watchers.add(self)

    # --- what the policy binds -------------------------------------------------------------

    def protected(self) -> Protected:
        with self._lock:
            tree = self.tree
            return Protected(tuple(tree.paths), tuple(tree.git_dirs), tuple(tree.roots))

    # --- commands ---------------------------------------------------------------------------

    def started(self) -> int:
        """A sandboxed command is about to start: changes made since the last check were not
        a sandboxed command's (taken as they are); its number, for `ended`."""
        with self._lock:
            self.check()
            seq = self._next = next(self._seq)
            self._running[seq] = None
            self._oldest = seq if self._oldest is None else min(self._oldest, seq)
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._ticking, daemon=True)
                self._ticker.start()
        return seq

    def ended(self, seq: int) -> None:
        with self._lock:
            self._running.pop(seq, None)
            self.check()

    def take_notes(self) -> str | None:
        """What the checks found since the last call, for the model (None: nothing)."""
        with self._lock:
            notes, self._notes = self._notes, []
        return "\n".join([*notes, FOOTER]) if notes else None

    def check(self) -> list[str]:
        """Look now; the report lines (also kept for the model and told to the user)."""
        with self._lock:
            if self._checking:
                return []
            self._checking = True
            try:
                lines = self._check()
            finally:
                self._checking = False
            self._oldest = min(self._running, default=None)
            if lines:
                self._notes.extend(lines)
        if lines:
            self._on_report(lines)
        return lines

    def _check(self) -> list[str]:
        changes = check(self.tree)
        if self._oldest is None or not changes:
            return []  # no sandboxed command ran since the last look: nothing is theirs
        stubs = self._stubs()
        suspect = [c for c in changes if self._suspect(c, stubs)]
        new_git = [c.path for c in suspect if c.git_dir and c.how != "changed"]
        lines = [line for g in new_git if (line := self._new_repository(g)) is not None]
        rest = [c for c in suspect if not any(g in c.path.parents for g in new_git)]
        rest = [c for c in rest if c.path not in new_git]
        untracked = self._hold_tracked(rest, lines)
        for path in untracked:
            lines.append(self._move(path))
        for path in (c.path for c in suspect):
            self._since.setdefault(path, self._next + 1)
        return lines

    def _suspect(self, change: Change, stubs: set[Path]) -> bool:
        """Whether a sandboxed command may have made this change."""
        if change.path in stubs:
            return False  # bubblewrap's own stand-in, removed when the commands end
        if change.how != "changed":
            return True
        # Edited in place: only a command that started before it was bound can have done it.
        assert self._oldest is not None
        return self._oldest < self._since.get(change.path, 0)

    # --- judging one path ------------------------------------------------------------------

    def _new_repository(self, git_dir: Path) -> str | None:
        runs = gitfacts.runs_commands(git_dir)
        if not runs:
            return None
        return (
            f"{self._rel(git_dir)}: a new git repository made by a sandboxed command, whose "
            f"git runs commands ({', '.join(runs[:6])}); it stays: check it before you run "
            "git there"
        )

    def _hold_tracked(self, changes: list[Change], lines: list[str]) -> list[Path]:
        """Hold what git tracks, note it in `lines`; the untracked paths to move aside."""
        outside_git = [c.path for c in changes if _in_git_dir(c.path) or c.path.name == GIT]
        candidates = [c.path for c in changes if c.path not in outside_git]
        tracked = self._tracked(candidates)
        untracked = list(outside_git)
        for path in candidates:
            mine = {t for t in tracked if t == path or path in t.parents}
            if not mine:
                untracked.append(path)
                continue
            self.held[path] = f"git put it there during a sandboxed command; {HELD}"
            lines.append(
                f"{self._rel(path)}: tracked by git, put there by a git command; held "
                f"back, left as git left it: {HELD}"
            )
            if path.is_dir() and not path.is_symlink():
                untracked += [f for f in _files(path) if f not in mine]
        return untracked

    def _tracked(self, paths: list[Path]) -> set[Path]:
        by_repo: dict[Path, list[Path]] = {}
        for path in paths:
            by_repo.setdefault(self._repo_of(path), []).append(path)
        found: set[Path] = set()
        for repo, inside in by_repo.items():
            found |= gitfacts.tracked(repo, inside, self._git)
        return found

    def _repo_of(self, path: Path) -> Path:
        roots = [r for r in self.tree.roots if r in path.parents]
        return max(roots, key=lambda r: len(r.parts), default=self.workspace)

    def _move(self, path: Path) -> str:
        rel = path.relative_to(self.workspace)
        refused = self._refused()
        try:
            if refused is None:
                raise NotMoved("this run keeps no session to move it to")
            where = move_aside(self.workspace, rel, refused)
        except NotMoved as e:
            self.held[path] = f"a sandboxed command left it and it could not be moved aside; {HELD}"
            return (
                f"{rel}: created by a sandboxed command; could not be moved aside ({e}), so it "
                f"stays: {HELD}"
            )
        self.tree.forget(path)
        return f"{rel}: created by a sandboxed command; moved aside to {where}"

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix()

    # --- what Peri itself does (file_watchers) ---------------------------------------------

    def before_read(self, path: Path) -> str | None:
        if not _within(path, self.workspace) or protected_path(path, self.workspace) is None:
            return None
        with self._lock:
            if self._oldest is not None:
                self.check()
            for held, why in self.held.items():
                if path == held or held in path.parents:
                    return f"held back by the sandbox: {why}"
        return None

    def after_write(self, path: Path) -> None:
        real = Path(os.path.realpath(path))
        if not _within(real, self.workspace) or real == self.workspace:
            return
        part = protected_path(real, self.workspace)
        if part is None:
            return
        top = self.workspace / part.rstrip("/")
        with self._lock:
            for known in (top, real):
                self.tree.learn(known)
                self._since[known] = self._next + 1

    def before_outside(self) -> None:
        with self._lock:
            if self._oldest is not None:
                self.check()

    def held_paths(self) -> dict[Path, str]:
        with self._lock:
            return dict(self.held)

    def release(self, path: Path) -> None:
        """The user confirmed a held path: Peri may load it from now on."""
        with self._lock:
            self.held.pop(path, None)

    # --- the session ------------------------------------------------------------------------

    def _ticking(self) -> None:
        while not self._closed.wait(self._tick):
            if self._running:
                with contextlib.suppress(Exception):  # a check that failed is tried again
                    self.check()

    def close(self) -> None:
        """The session ends: one last look (what a command did as it was stopped)."""
        self._closed.set()
        with contextlib.suppress(Exception):
            self.check()
        file_watchers.remove(self)


def _in_git_dir(path: Path) -> bool:
    return any(p.name == GIT for p in path.parents)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _files(folder: Path) -> list[Path]:
    """The files below `folder`, links not followed, at most MAX_FILES_SPLIT."""
    out: list[Path] = []
    for base, dirs, names in os.walk(folder, followlinks=False):
        out += [Path(base) / n for n in names]
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(base, d))]
        if len(out) >= MAX_FILES_SPLIT:
            break
    return out[:MAX_FILES_SPLIT]
