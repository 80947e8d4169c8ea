"""Checkpoints: a file's bytes kept before Peri writes it, so /rewind can put them back.

Bytes live content-addressed (sha256) and deduplicated in `<session>/checkpoints/`; which file held
what, and when, is recorded by `CheckpointEntry` lines in the session's transcript, "before" a call
runs and "after" it ran. One `Checkpointer` serves a session and all its SubAgents (their writes
are recorded in the main transcript, named by the agent).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from peri_cli.base.atomic import atomic_write
from peri_cli.base.safe_read import SafeReadError, read_bytes
from peri_cli.session.store import CHECKPOINTS_DIR
from peri_cli.session.transcript import CheckpointEntry, FileState

if TYPE_CHECKING:
    from peri_cli.session.store import Session

__all__ = ["CHECKPOINTS_DIR", "CheckpointError", "Checkpointer", "current_sha", "sha_of"]

# A file larger than this is not kept (it is recorded as not restorable): Write and Edit work on
# text files the model handles whole, far smaller than this.
MAX_KEPT_BYTES = 64 << 20
REWIND_CALL = "rewind"
_SHA = re.compile(r"[0-9a-f]{64}")


class CheckpointError(Exception):
    """A file that cannot be restored; the message says which and why."""


def sha_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _state(path: Path) -> tuple[FileState, bytes | None]:
    """What `path` holds now: its hash and bytes, absent, or a note why it is not kept."""
    try:
        data = read_bytes(path, max_bytes=MAX_KEPT_BYTES)
    except SafeReadError as e:
        if e.missing:
            return FileState(path=str(path)), None
        return FileState(path=str(path), note=e.reason), None
    return FileState(path=str(path), sha=sha_of(data)), data


def current_sha(path: Path) -> str | Literal[False] | None:
    """The sha256 of what `path` holds now; None when absent; False when it cannot be read."""
    state, _ = _state(path)
    if state.note is not None:
        return False
    return state.sha


class Checkpointer:
    """Keeps files before writes and records them in the session's transcript."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def dir(self) -> Path:
        return self.session.dir / CHECKPOINTS_DIR

    def blob(self, sha: str) -> Path:
        if not _SHA.fullmatch(sha):  # a transcript line is data: never a path to follow
            raise CheckpointError(f"its checkpoint name {sha[:16]!r} is not a sha256")
        return self.dir / sha

    def keep(self, paths: Iterable[Path]) -> list[FileState]:
        """Store the current bytes of each file (once per content); blocking, run it in a
        thread. A file that cannot be kept is recorded with a note, never fails the write."""
        states: list[FileState] = []
        for path in dict.fromkeys(paths):
            state, data = _state(path)
            if data is not None and state.sha is not None:
                try:
                    self._store(state.sha, data)
                except OSError as e:
                    note = f"its bytes could not be kept ({e.strerror or e})"
                    state = FileState(path=str(path), note=note)
            states.append(state)
        return states

    def look(self, paths: Iterable[Path]) -> list[FileState]:
        """What each file holds now, hashed but not stored (the "after" record)."""
        return [_state(p)[0] for p in dict.fromkeys(paths)]

    def _store(self, sha: str, data: bytes) -> None:
        target = self.blob(sha)
        if target.is_file():
            return  # deduplicated: the same bytes are kept once
        # Copies of the user's files, private ones included: readable by the user alone.
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(target, data, mode=0o600)

    def record(
        self,
        phase: Literal["before", "after"],
        states: list[FileState],
        *,
        call_id: str,
        agent: str | None,
    ) -> None:
        if states:
            entry = CheckpointEntry(phase=phase, files=states, call_id=call_id, agent=agent)
            self.session.append(entry)

    def read_blob(self, sha: str) -> bytes:
        """The kept bytes with this hash; CheckpointError when missing or damaged."""
        try:
            data = read_bytes(self.blob(sha), max_bytes=MAX_KEPT_BYTES)
        except SafeReadError as e:
            raise CheckpointError(f"its checkpoint {sha[:12]} is {e.reason}") from e
        if sha_of(data) != sha:
            raise CheckpointError(f"its checkpoint {sha[:12]} is damaged")
        return data

    def restore(self, path: Path, sha: str | None) -> None:
        """Put `path` back to the kept bytes `sha`, or remove it (None: it did not exist).

        Recorded paths were resolved when Peri wrote them: a folder on the way that now resolves
        elsewhere (made a symlink since) is refused, or the restore would write through it."""
        if path.parent.resolve() != path.parent:
            raise CheckpointError(
                f"a folder on its path now leads to {path.parent.resolve()}; not followed"
            )
        if sha is None:
            try:
                if path.is_symlink() or path.is_file():
                    path.unlink()
                elif path.exists():
                    raise CheckpointError("it is no longer a file; left as it is")
            except OSError as e:
                raise CheckpointError(f"cannot remove it ({e.strerror or e})") from e
            return
        data = self.read_blob(sha)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
        except OSError as e:
            raise CheckpointError(f"cannot write it ({e.strerror or e})") from e
