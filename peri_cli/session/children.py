"""SubAgent transcripts: a child session beside its parent's
(`<session-id>/agents/<child-id>.jsonl`, the parent's frozen snapshot in its header), and what
those files tell of each SubAgent for resume and /agents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from peri_cli.session.store import AGENTS_DIR, Session, SessionInfo
from peri_cli.session.transcript import AgentRef, AgentStatus, Header
from peri_cli.session.transcript_file import LoadResult, TranscriptError, TranscriptWriter, load


def create_child(parent: Session, child_id: str, ref: AgentRef) -> Session:
    """A SubAgent's own transcript beside its parent's, with the parent's frozen snapshot."""
    path = parent.dir / AGENTS_DIR / f"{child_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = Header(
        session_id=child_id, workspace=parent.header.workspace, snapshot=parent.snapshot, agent=ref
    )
    writer = TranscriptWriter(path)
    writer.append(header)
    info = SessionInfo(
        id=child_id, title=ref.description, created=header.ts, updated=header.ts, message_count=0
    )
    return Session(path, LoadResult(header=header, entries=[header]), writer, info)


@dataclass(frozen=True)
class ChildRecord:
    """A SubAgent of a session as its transcript tells it (for resume and /agents)."""

    id: str
    ref: AgentRef
    state: str  # the last status; `running` with no process behind it reads as interrupted
    detail: str
    path: Path
    created: str


def list_children(session_dir: Path) -> list[ChildRecord]:
    """The SubAgents recorded under a session folder, oldest first; unreadable ones skipped."""
    folder = session_dir / AGENTS_DIR
    if not folder.is_dir():
        return []
    records: list[ChildRecord] = []
    for path in folder.glob("*.jsonl"):
        try:
            loaded = load(path)
        except (TranscriptError, OSError):
            continue
        ref = loaded.header.agent
        if ref is None:
            continue
        statuses = [e for e in loaded.entries if isinstance(e, AgentStatus)]
        state, detail = (statuses[-1].status, statuses[-1].detail) if statuses else ("queued", "")
        if state == "running":
            state, detail = "interrupted", "its session ended while it ran"
        header = loaded.header
        records.append(ChildRecord(header.session_id, ref, state, detail, path, header.ts))
    records.sort(key=lambda r: r.created)
    return records
