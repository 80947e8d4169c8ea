"""Sessions on disk: create, open, continue, resume by prefix, fork and list, per workspace."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from peri_cli.base.ids import is_session_id, session_id
from peri_cli.base.messages import TextPart
from peri_cli.session.transcript import (
    ClearMarker,
    Entry,
    Header,
    Interruption,
    MessageEntry,
    ParentRef,
    Snapshot,
    TornLineRepair,
    dump_entry,
    now_iso,
    parse_entry,
)
from peri_cli.session.transcript_file import (
    LoadResult,
    TranscriptError,
    TranscriptWriter,
    load_tail,
    peek,
    read_older,
)

MIN_PREFIX = 8
CHECKPOINTS_DIR = "checkpoints"  # kept file bytes for /rewind (session/checkpoints.py)
AGENTS_DIR = "agents"  # SubAgent transcripts: <session-id>/agents/<child-id>.jsonl
REFUSED_DIR = "refused"  # in PERI_HOME: what sandboxed commands planted, by session
TITLE_CHARS = 80


def workspace_key(workspace: Path) -> str:
    """A readable slug of the absolute path plus a short hash, so distinct paths never collide."""
    absolute = str(workspace.resolve())
    slug = re.sub(r"[^A-Za-z0-9]+", "-", absolute).strip("-")[-48:] or "root"
    digest = hashlib.sha256(absolute.encode()).hexdigest()[:8]
    return f"{slug}-{digest}"


class SessionNotFound(TranscriptError):
    pass


@dataclass(frozen=True)
class SessionInfo:
    """What `peri sessions` and the picker show; kept in a small sidecar so listing stays cheap."""

    id: str
    title: str
    created: str
    updated: str
    message_count: int
    parent: str | None = None
    # Whether the model ever replied (`shows_an_answer`): a run that failed before any reply
    # (a refused key) is still listed, but `-c` passes over it.
    answered: bool = False

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def shows_an_answer(entry: Entry) -> bool:
    """Whether the model replied: an assistant message, or a turn stopped after its reply had
    begun (an older entry, which does not say, counts when the user stopped it)."""
    if isinstance(entry, MessageEntry):
        return entry.message.role == "assistant"
    if isinstance(entry, Interruption):
        return entry.replied if entry.replied is not None else entry.reason == "cancelled"
    return False


def _title_of(entry: MessageEntry) -> str:
    text = " ".join(p.text for p in entry.message.content if isinstance(p, TextPart))
    return " ".join(text.split())[:TITLE_CHARS]


class Session:
    """An open, writable session: its entries in memory and the locked file they are appended to."""

    def __init__(
        self, path: Path, loaded: LoadResult, writer: TranscriptWriter, info: SessionInfo
    ) -> None:
        self.path = path
        self.header = loaded.header
        # Header plus the visible tail; older lines stay on disk (see `older`).
        self.entries: list[Entry] = loaded.entries
        self.warnings = loaded.warnings
        self.tail_offset = loaded.tail_offset
        self._writer = writer
        self._info = info

    @property
    def id(self) -> str:
        return self.header.session_id

    @property
    def snapshot(self) -> Snapshot:
        return self.header.snapshot

    @property
    def dir(self) -> Path:
        """Side files (large tool outputs, SubAgent transcripts) live here."""
        return self.path.with_suffix("")

    @property
    def info(self) -> SessionInfo:
        return self._info

    def append(self, *entries: Entry) -> None:
        """Persist entries together (one write + fsync), then update the cheap listing sidecar."""
        self._writer.append(*entries)
        self.entries.extend(entries)
        messages = [e for e in entries if isinstance(e, MessageEntry)]
        title = self._info.title
        answered = self._info.answered or any(shows_an_answer(e) for e in entries)
        if not title:
            users = [e for e in messages if e.message.role == "user" and _title_of(e)]
            title = _title_of(users[0]) if users else ""
        self._info = SessionInfo(
            id=self._info.id,
            title=title,
            created=self._info.created,
            updated=now_iso(),
            message_count=self._info.message_count + len(messages),
            parent=self._info.parent,
            answered=answered,
        )
        _write_sidecar(self.path, self._info)

    def older(self, before: int, limit: int = 200) -> tuple[list[Entry], int]:
        """Entries stored before byte `before` (e.g. `tail_offset`), for showing older history."""
        return read_older(self.path, before, limit)

    def clear(self) -> ClearMarker:
        marker = ClearMarker()
        self.append(marker)
        return marker

    def close(self) -> None:
        self._writer.close()


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".meta.json")


def _write_sidecar(path: Path, info: SessionInfo) -> None:
    """Best effort: the sidecar only speeds up listing and is rebuilt from the file when stale."""
    tmp = _sidecar(path).with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(info.to_json(), ensure_ascii=False))
        os.replace(tmp, _sidecar(path))
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def scan_info(path: Path) -> SessionInfo:
    """Listing facts from the file itself: types are peeked; the header is parsed, and entries
    only until the title and whether the model answered are known."""
    header: Header | None = None
    title, updated, count, answered = "", "", 0, False
    with path.open("rb") as f:
        for line in f:
            kind = peek(line)
            if kind is None:
                continue
            updated = max(updated, kind.ts)
            if header is None:
                entry = parse_entry(line.decode("utf-8"))
                if not isinstance(entry, Header):
                    break
                header = entry
            elif kind.type in ("message", "interruption"):
                count += kind.type == "message"
                if not (title and answered):  # parsed only until both are known
                    entry = parse_entry(line.decode("utf-8"))
                    answered = answered or shows_an_answer(entry)
                    if (
                        not title
                        and isinstance(entry, MessageEntry)
                        and entry.message.role == "user"
                    ):
                        title = _title_of(entry)
    if header is None:
        raise TranscriptError(f"{path}: no session header on the first line")
    return SessionInfo(
        id=header.session_id,
        title=title,
        created=header.ts,
        updated=updated,
        message_count=count,
        parent=header.parent.session_id if header.parent else None,
        answered=answered,
    )


class SessionStore:
    """All sessions of one workspace under `$PERI_HOME/projects/<workspace-key>/`."""

    def __init__(self, peri_home: Path, workspace: Path) -> None:
        self.workspace = workspace.resolve()
        self.peri_home = peri_home
        self.root = peri_home / "projects" / workspace_key(self.workspace)

    def path_of(self, session_id: str) -> Path:
        return self.root / f"{session_id}.jsonl"

    def create(
        self, snapshot: Snapshot, *, parent: ParentRef | None = None, body: Sequence[bytes] = ()
    ) -> Session:
        """A new session file: its header, then (for a fork) the parent's lines verbatim."""
        self.root.mkdir(parents=True, exist_ok=True)
        new_id = session_id()
        header = Header(
            session_id=new_id, workspace=str(self.workspace), snapshot=snapshot, parent=parent
        )
        path = self.path_of(new_id)
        writer = TranscriptWriter(path)
        writer.append_raw(b"".join(line + b"\n" for line in (dump_entry(header).encode(), *body)))
        info = (
            scan_info(path)
            if body
            else SessionInfo(
                id=new_id,
                title="",
                created=header.ts,
                updated=header.ts,
                message_count=0,
                parent=parent.session_id if parent else None,
            )
        )
        _write_sidecar(path, info)
        loaded = load_tail(path) if body else LoadResult(header=header, entries=[header])
        return Session(path, loaded, writer, info)

    def open(self, session_id: str) -> Session:
        """Open a session for writing; raises SessionLocked if another process has it."""
        path = self.path_of(session_id)
        if not path.exists():
            raise SessionNotFound(f"no session {session_id} in this workspace")
        writer = TranscriptWriter(path)
        try:
            loaded = load_tail(path)
            if loaded.unsealed:  # a garbage line someone appended: seal it like a torn tail
                repair = TornLineRepair(skipped_bytes=loaded.unsealed)
                writer.append(repair)
                loaded.entries.append(repair)
            info = _read_sidecar(path) or scan_info(path)
        except (TranscriptError, OSError):
            writer.close()
            raise
        return Session(path, loaded, writer, info)

    def resolve(self, id_or_prefix: str) -> str:
        """A full id, or a unique prefix of at least 8 characters; never a path."""
        if not is_session_id(id_or_prefix):
            raise SessionNotFound(
                f"{id_or_prefix!r} is not a session id (hex digits and dashes, at most 36 "
                "characters); `peri sessions` lists them"
            )
        if self.path_of(id_or_prefix).exists():
            return id_or_prefix
        if len(id_or_prefix) < MIN_PREFIX:
            raise SessionNotFound(
                f"session id prefix {id_or_prefix!r} is too short "
                f"(at least {MIN_PREFIX} characters)"
            )
        matches = sorted(p.stem for p in self.root.glob(f"{glob_escape(id_or_prefix)}*.jsonl"))
        if not matches:
            raise SessionNotFound(f"no session matching {id_or_prefix!r} in this workspace")
        if len(matches) > 1:
            raise SessionNotFound(
                f"{id_or_prefix!r} matches {len(matches)} sessions; give more characters"
            )
        return matches[0]

    def latest(self) -> str | None:
        """The session `-c` continues: the most recently updated one that got an answer."""
        return next((info.id for info in self.list() if info.answered), None)

    def fork(self, session_id: str) -> Session:
        """Copy a session's lines into a new session, byte for byte; the parent is only read.

        Entry ids are kept, so projection directives and boundaries still point at their targets.
        Lines that are not entries (a torn fragment, a corrupt line) are left behind.
        """
        source = self.path_of(session_id)
        header_line, *lines = _read_lines(source)
        parent_header = parse_entry(header_line.decode("utf-8"))
        if not isinstance(parent_header, Header):
            raise TranscriptError(f"{source}: no session header on the first line")
        body = [line for line in lines if peek(line) is not None]
        last = peek(body[-1]) if body else None
        parent = ParentRef(session_id=session_id, forked_at=last.id if last else None)
        child = self.create(parent_header.snapshot, parent=parent, body=body)
        agents = source.with_suffix("") / AGENTS_DIR
        if agents.is_dir():  # the SubAgents' transcripts go along with the conversation
            try:
                shutil.copytree(agents, child.dir / AGENTS_DIR, dirs_exist_ok=True)
            except OSError as e:
                child.warnings.append(f"the fork could not copy the SubAgent transcripts: {e}")
        kept = source.with_suffix("") / CHECKPOINTS_DIR
        if kept.is_dir():  # so /rewind works in the fork; the files never change: link them
            try:
                shutil.copytree(kept, child.dir / CHECKPOINTS_DIR, copy_function=_link_or_copy)
            except OSError as e:
                child.warnings.append(f"the fork could not copy the checkpoints (/rewind): {e}")
        if len(body) < len(lines):
            child.warnings.append(
                f"the fork left behind {len(lines) - len(body)} unreadable line(s) of the parent"
            )
        return child

    def delete(self, session_id: str) -> None:
        """Remove a session and all that is kept with it: its folder (large outputs' side files,
        SubAgent transcripts, checkpoints), what the sandbox moved aside for it, its listing
        sidecar and its file. SessionLocked while a process has it open."""
        path = self.path_of(session_id)
        if not path.exists():
            raise SessionNotFound(f"no session {session_id} in this workspace")
        writer = TranscriptWriter(path)  # holds the lock: no process opens it meanwhile
        try:
            shutil.rmtree(path.with_suffix(""), ignore_errors=True)  # links are not followed
            shutil.rmtree(self.peri_home / REFUSED_DIR / session_id, ignore_errors=True)
            _sidecar(path).unlink(missing_ok=True)
            path.unlink()  # (its lock file stays, as TranscriptWriter.close says why)
        finally:
            writer.close()

    def list(self) -> list[SessionInfo]:
        """Newest first, from the sidecars (a missing or stale one is rebuilt from the file).
        Sessions that never got a message are left out."""
        if not self.root.is_dir():
            return []
        infos: list[SessionInfo] = []
        for path in self.root.glob("*.jsonl"):
            info = _read_sidecar(path)
            if info is None:
                try:
                    info = scan_info(path)
                except (TranscriptError, OSError, ValueError):
                    continue
                _write_sidecar(path, info)
            if info.message_count or info.parent:  # a TUI opened and closed unused is no session
                infos.append(info)
        infos.sort(key=lambda i: (i.updated, i.created), reverse=True)  # never by id
        return infos


def _read_sidecar(path: Path) -> SessionInfo | None:
    try:
        meta = _sidecar(path)
        if meta.stat().st_mtime < path.stat().st_mtime - 1:
            return None  # written by something that did not update the sidecar
        data = json.loads(meta.read_text())
        if "answered" not in data:
            return None  # written before the flag existed: rebuilt from the file once
        return SessionInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def _read_lines(path: Path) -> list[bytes]:
    """Complete lines only: a torn last fragment (no newline) is not a line."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TranscriptError(f"{path}: cannot read session file ({e.strerror})") from e
    lines = data.split(b"\n")
    lines.pop()  # after the final newline: empty, or a torn fragment
    if not lines:
        raise TranscriptError(f"{path}: empty session file")
    return lines


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link where the file system allows one, else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)
