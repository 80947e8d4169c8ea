"""The transcript file: tolerant loading (a torn last line is skipped, a repaired fragment too),
the visible tail a resume reads, pages of older lines, and the one writer, which holds a lock and
appends with fsync. Entries are never rewritten; their types are in `transcript`."""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ValidationError

from peri_cli.base.textsafe import scrub_surrogates
from peri_cli.session.transcript import (
    HEADER_VERSION,
    CompactBoundary,
    Entry,
    Header,
    RewindMarker,
    TornLineRepair,
    dump_entry,
    parse_entry,
)


class TranscriptError(Exception):
    """A transcript that cannot be used; the message says which file and why."""


class SessionLocked(TranscriptError):
    pass


@dataclass
class LoadResult:
    header: Header
    entries: list[Entry]  # header first; with `load_tail`, header + the visible tail
    warnings: list[str] = field(default_factory=list)
    tail_offset: int = 0  # byte offset of the first loaded line after the header (0: all loaded)
    unsealed: int = 0  # bytes of a complete but unreadable last line no repair entry follows


# Peri writes every entry as {"id":…,"ts":…,"type":…}: those three are readable without parsing.
_PREFIX = re.compile(rb'\{"id":"([^"]*)","ts":"([^"]*)","type":"([a-z_]+)"')


class Peek(NamedTuple):
    id: str
    ts: str
    type: str


def peek(line: bytes) -> Peek | None:
    """Id, time and type of a line, cheaply; None when the line is not an entry."""
    match = _PREFIX.match(line)
    if match:
        return Peek(*(g.decode() for g in match.groups()))
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    entry_id, ts, kind = obj.get("id"), obj.get("ts", ""), obj.get("type")
    if isinstance(entry_id, str) and isinstance(ts, str) and isinstance(kind, str):
        return Peek(entry_id, ts, kind)
    return None


def _parse(
    path: Path, lines: list[tuple[str, bytes]], *, file_ends_torn: bool
) -> tuple[list[Entry], list[str], int]:
    """Parse labelled lines. A torn last line, or a fragment a repair entry follows, is skipped.
    Also returns the size of a complete last line that was skipped unsealed (garbage another
    process appended): the writer must seal it, or the next line would make it a corrupt middle."""
    entries: list[Entry] = []
    warnings: list[str] = []
    bad: list[str] = []
    unsealed = 0
    for index, (label, line) in enumerate(lines):
        try:
            entries.append(parse_entry(line.decode("utf-8")))
            continue
        except (ValidationError, UnicodeDecodeError, ValueError):
            pass
        is_last = index == len(lines) - 1
        following = None if is_last else peek(lines[index + 1][1])
        repaired = following is not None and following.type == "repair"
        if (is_last and (file_ends_torn or index > 0)) or repaired:
            warnings.append(f"{path.name}: skipped a torn {label} ({len(line)} bytes)")
            if is_last and not file_ends_torn:
                unsealed = len(line)
        else:
            bad.append(label)
    if bad:
        shown = ", ".join(bad[:5])
        raise TranscriptError(
            f"{path}: corrupt {shown} in the middle of the session; "
            f"{len(entries)} other lines parse. Fork it with --fork-session to continue from them."
        )
    return entries, warnings, unsealed


def _check_header(path: Path, entries: list[Entry]) -> Header:
    if not entries or not isinstance(entries[0], Header):
        raise TranscriptError(f"{path}: no session header on the first line")
    header = entries[0]
    if header.version != HEADER_VERSION:
        raise TranscriptError(
            f"{path}: session format version {header.version} is not supported by this peri "
            f"(supports {HEADER_VERSION}); upgrade peri to open it"
        )
    return header


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise TranscriptError(f"{path}: cannot read session file ({e.strerror})") from e


def load(path: Path) -> LoadResult:
    """Read every line: a torn last line is skipped with a warning, a corrupt middle line fails."""
    lines = _read(path).split(b"\n")
    torn = lines[-1] != b""  # a complete file ends with a newline
    if not torn:
        lines.pop()
    numbered = [(f"line {n}", line) for n, line in enumerate(lines, start=1)]
    entries, warnings, unsealed = _parse(path, numbered, file_ends_torn=torn)
    return LoadResult(
        header=_check_header(path, entries), entries=entries, warnings=warnings, unsealed=unsealed
    )


def _lines_backwards(
    path: Path, end: int | None = None, block: int = 1 << 20
) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line) from `end` (default: the end of the file) back to the start, one block
    at a time."""
    with path.open("rb") as f:
        pos = f.seek(0, os.SEEK_END) if end is None else end
        carry = b""
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            data = f.read(pos - start) + carry
            parts = data.split(b"\n")
            carry = parts.pop(0) if start > 0 else b""
            end = start + len(data)
            for part in reversed(parts):
                line_start = end - len(part)
                yield line_start, part
                end = line_start - 1
            pos = start


def load_tail(path: Path) -> LoadResult:
    """The header plus the entries the model can still see: from the last /clear, or the last
    Full-compact summary, to the end (a /rewind reaches back past its target first). Reads
    backwards, so the cost follows the tail, not the file.
    Lines before the cut are not parsed (they are excluded from the view in any case)."""
    try:
        with path.open("rb") as f:
            header_line = f.readline()
    except OSError as e:
        raise TranscriptError(f"{path}: cannot read session file ({e.strerror})") from e
    header_entries, _, _ = _parse(
        path, [("line 1", header_line.rstrip(b"\n"))], file_ends_torn=False
    )
    header = _check_header(path, header_entries)
    tail: list[tuple[int, bytes]] = []  # (offset, line), newest first
    wanted: str | None = None  # a summary id to reach before stopping
    rewound: str | None = None  # a /rewind target: what lies before it is visible again
    torn = False
    first = True
    for offset, line in _lines_backwards(path):
        if offset == 0:
            break
        if first:  # what follows the final newline: nothing, or a torn fragment
            first = False
            torn = line != b""
            if not torn:
                continue
        tail.append((offset, line))
        kind = peek(line)
        if kind is None:
            continue
        if rewound is not None:  # hidden by the rewind: no /clear or boundary here counts
            if kind.id == rewound:
                rewound = None
            continue
        if wanted is not None and kind.id == wanted:
            break
        if wanted is None and kind.type == "rewind":
            rewound = _rewind_target(line)
            continue
        if wanted is None and kind.type == "clear":
            break
        if wanted is None and kind.type == "compact_boundary":
            boundary = parse_entry(line.decode("utf-8"))
            assert isinstance(boundary, CompactBoundary)
            wanted = boundary.summary_id
    tail.reverse()
    labelled = [(f"line at byte {offset}", line) for offset, line in tail]
    entries, warnings, unsealed = _parse(path, labelled, file_ends_torn=torn)
    return LoadResult(
        header=header,
        entries=[header, *entries],
        warnings=warnings,
        tail_offset=tail[0][0] if tail else 0,
        unsealed=unsealed,
    )


def _rewind_target(line: bytes) -> str | None:
    """The prompt id a rewind line names; None for a line that does not parse (it is then
    skipped on load like any unreadable line)."""
    try:
        marker = parse_entry(line.decode("utf-8"))
    except (ValidationError, UnicodeDecodeError, ValueError):
        return None
    return marker.to if isinstance(marker, RewindMarker) else None


def read_older(path: Path, before: int, limit: int) -> tuple[list[Entry], int]:
    """Up to `limit` parseable entries that end before byte `before`, oldest first, and the offset
    to ask for the next older batch (0 when the header is reached). For showing older history."""
    found: list[Entry] = []
    next_before = 0
    for offset, line in _lines_backwards(path, end=max(0, before - 1)):
        if offset == 0 or len(found) >= limit:
            next_before = 0 if offset == 0 else offset + len(line) + 1
            break
        try:
            found.append(parse_entry(line.decode("utf-8")))
        except (ValidationError, UnicodeDecodeError, ValueError):
            continue
    found.reverse()
    return found, next_before


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
        self._repair_torn_end()

    def _repair_torn_end(self) -> None:
        """A crash mid-write leaves a fragment with no newline; close it off and say so below it."""
        size = self._file.seek(0, os.SEEK_END)
        if size == 0:
            return
        with self.path.open("rb") as f:
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            f.seek(max(0, size - (1 << 20)))
            fragment = f.read().rsplit(b"\n", 1)[-1]
        self._file.write(b"\n")
        self.append(TornLineRepair(skipped_bytes=len(fragment)))

    def append(self, *entries: BaseModel, sync: bool = True) -> None:
        """Append entries in a single write, so a crash tears at most the end of this batch."""
        text = "".join(dump_entry(e) + "\n" for e in entries)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate got past the boundaries: the record wins
            data = scrub_surrogates(text).encode("utf-8")
        self.append_raw(data, sync=sync)

    def append_raw(self, data: bytes, *, sync: bool = True) -> None:
        """Append complete, already serialized lines (a fork copies its parent's bytes)."""
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
