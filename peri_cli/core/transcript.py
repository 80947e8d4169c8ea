"""The append-only JSONL transcript: entry types, append with fsync, tolerant load, a writer lock.

A past line is never rewritten. Compaction, /clear and projections are recorded as new entries that
refer to earlier ids; `projection.project` turns entries into the model's view.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from peri_cli.core.ids import uuid7
from peri_cli.core.messages import Message, Usage

HEADER_VERSION = 1


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    id: str = Field(default_factory=uuid7)
    ts: str = Field(default_factory=now_iso)


class Snapshot(BaseModel):
    """The frozen base prompt and what it was built from; reused byte for byte all session long."""

    model_config = ConfigDict(frozen=True)

    system: str
    guide_files: list[str] = []
    guide_warnings: list[str] = []
    skills: list[str] = []
    meta_harness: dict[str, bool] = {}


class ParentRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    forked_at: str | None = None  # id of the parent's last entry that was copied


class Header(_Entry):
    type: Literal["header"] = "header"
    version: int = HEADER_VERSION
    session_id: str
    workspace: str
    snapshot: Snapshot
    parent: ParentRef | None = None


class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: Message
    usage: Usage | None = None
    model: str | None = None
    cache_read_share: float | None = None  # of the request that produced this assistant message


class ProjectionEntry(_Entry):
    """Micro-compact directives; each refers to an earlier message entry by id."""

    type: Literal["projection"] = "projection"
    directives: list[dict[str, Any]]
    tokens_before: int | None = None
    tokens_after: int | None = None


class CompactBoundary(_Entry):
    """Full compact: every message entry before `summary_id` is excluded from the model's view."""

    type: Literal["compact_boundary"] = "compact_boundary"
    summary_id: str
    focus: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    excluded_messages: int = 0


class ClearMarker(_Entry):
    """/clear: the visible history starts empty after this entry; older lines stay in the file."""

    type: Literal["clear"] = "clear"


Entry = Annotated[
    Header | MessageEntry | ProjectionEntry | CompactBoundary | ClearMarker,
    Field(discriminator="type"),
]
_ENTRY: TypeAdapter[Entry] = TypeAdapter(Entry)


def dump_entry(entry: BaseModel) -> str:
    return json.dumps(entry.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def parse_entry(line: str) -> Entry:
    return _ENTRY.validate_json(line)


class TranscriptError(Exception):
    """A transcript that cannot be used; the message says which file and why."""


class SessionLocked(TranscriptError):
    pass


@dataclass
class LoadResult:
    header: Header
    entries: list[Entry]  # header first
    warnings: list[str] = field(default_factory=list)


def load(path: Path) -> LoadResult:
    """Read: a torn last line is skipped with a warning, a bad middle line is an error."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise TranscriptError(f"{path}: cannot read session file ({e.strerror})") from e
    lines = raw.split(b"\n")
    torn_tail = lines[-1] != b""  # a complete file ends with a newline
    if not torn_tail:
        lines.pop()
    entries: list[Entry] = []
    warnings: list[str] = []
    bad: list[int] = []
    for number, line in enumerate(lines, start=1):
        is_last = number == len(lines)
        try:
            entries.append(parse_entry(line.decode("utf-8")))
        except (ValidationError, UnicodeDecodeError, ValueError):
            if is_last and number > 1:
                warnings.append(f"{path.name}: skipped a torn last line ({len(line)} bytes)")
            else:
                bad.append(number)
    if bad:
        shown = ", ".join(str(n) for n in bad[:5])
        raise TranscriptError(
            f"{path}: corrupt line(s) {shown} in the middle of the session; "
            f"{len(entries)} other lines parse. Fork it with --fork-session to continue from them."
        )
    if not entries or not isinstance(entries[0], Header):
        raise TranscriptError(f"{path}: no session header on the first line")
    header = entries[0]
    if header.version != HEADER_VERSION:
        raise TranscriptError(
            f"{path}: session format version {header.version} is not supported by this peri "
            f"(supports {HEADER_VERSION}); upgrade peri to open it"
        )
    return LoadResult(header=header, entries=entries, warnings=warnings)


def load_lenient(path: Path) -> LoadResult:
    """Like `load`, but keeps every line that parses (used to fork a damaged file)."""
    entries: list[Entry] = []
    warnings: list[str] = []
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            entries.append(parse_entry(line.decode("utf-8")))
        except (ValidationError, UnicodeDecodeError, ValueError):
            warnings.append(f"{path.name}: skipped corrupt line {number}")
    if not entries or not isinstance(entries[0], Header):
        raise TranscriptError(f"{path}: no session header on the first line")
    return LoadResult(header=entries[0], entries=entries, warnings=warnings)


class TranscriptWriter:
    """The one writer of a session file; holds an exclusive lock for as long as it is open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_path = path.with_suffix(".lock")
        self._lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            holder = os.pread(self._lock_fd, 32, 0).decode(errors="replace").strip()
            os.close(self._lock_fd)
            who = f" (pid {holder})" if holder else ""
            raise SessionLocked(
                f"session {path.stem} is open in another peri process{who}; "
                "close it there, or use --fork-session to continue in a copy"
            ) from e
        os.ftruncate(self._lock_fd, 0)
        os.pwrite(self._lock_fd, str(os.getpid()).encode(), 0)
        self._file = open(path, "ab")  # noqa: SIM115 - held open for the session's lifetime

    def append(self, *entries: BaseModel, sync: bool = True) -> None:
        """Append entries in a single write, so a crash tears at most the end of this batch."""
        data = "".join(dump_entry(e) + "\n" for e in entries).encode("utf-8")
        self._file.write(data)
        self._file.flush()
        if sync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.close()
        fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        os.close(self._lock_fd)
        # The lock file stays: unlinking it would let a waiting process lock a dead inode.
