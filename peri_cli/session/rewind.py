"""/rewind: back to before one of the user's prompts, in the conversation, the code, or both.

Nothing is deleted. A conversation rewind appends a `RewindMarker` (the view is computed in
`projection.visible_entries`); a code rewind puts files back from their checkpoints and records
that as checkpoints of its own, so it can be rewound in turn. Both read the whole transcript, so
they reach past a Full compaction and work after resume and in a fork.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from peri_cli.base.messages import TextPart
from peri_cli.session.checkpoints import (
    REWIND_CALL,
    Checkpointer,
    CheckpointError,
    current_sha,
)
from peri_cli.session.transcript import (
    CheckpointEntry,
    Entry,
    FileState,
    MessageEntry,
    RewindMarker,
)
from peri_cli.session.transcript_file import TranscriptError, load
from peri_cli.session.turns import is_typed

if TYPE_CHECKING:
    from peri_cli.session.store import Session

RewindKind = Literal["both", "conversation", "code"]


@dataclass(frozen=True)
class PromptRef:
    """One prompt the user typed, as /rewind lists it."""

    id: str
    text: str
    ts: str
    number: int  # 1 for the session's first prompt


def record(session: Session) -> list[Entry]:
    """Every entry of the session (the in-memory list holds only the visible tail)."""
    try:
        return load(session.path).entries
    except (TranscriptError, OSError):
        return list(session.entries)


def hidden_ids(entries: Sequence[Entry]) -> set[str]:
    """Ids of the entries a /rewind hid: each marker hides its prompt and what came after it,
    up to the marker."""
    positions: dict[str, int] | None = None
    hidden: set[str] = set()
    for index, entry in enumerate(entries):
        if isinstance(entry, RewindMarker):
            if positions is None:
                positions = {e.id: i for i, e in enumerate(entries)}
            start = positions.get(entry.to)
            if start is not None and start < index:
                hidden.update(e.id for e in entries[start:index])
    return hidden


def prompt_text(entry: MessageEntry) -> str:
    return "".join(p.text for p in entry.message.content if isinstance(p, TextPart))


def prompts(entries: Sequence[Entry]) -> list[PromptRef]:
    """The prompts the user typed and did not rewind away, newest first."""
    hidden = hidden_ids(entries)
    found: list[PromptRef] = []
    for entry in entries:
        if isinstance(entry, MessageEntry) and is_typed(entry):
            text = prompt_text(entry)
            if text.strip():
                number = len(found) + 1
                if entry.id not in hidden:
                    found.append(PromptRef(entry.id, text, entry.ts, number))
                else:
                    found.append(PromptRef("", "", "", number))  # keeps the numbering
    return [p for p in reversed(found) if p.id]


# --- code ---------------------------------------------------------------------------------------


@dataclass
class FileChange:
    """One file Peri (or a SubAgent) changed since a prompt, and what restoring it means."""

    path: Path
    target: str | None  # the sha it held before the prompt's first change (None: absent)
    note: str | None = None  # why it cannot be restored (its bytes were never kept)
    changed_outside: bool = False  # it no longer holds what Peri last left there
    unchanged: bool = False  # it already holds the target: nothing to do

    @property
    def restorable(self) -> bool:
        return self.note is None and not self.unchanged


@dataclass
class CodePlan:
    prompt_id: str
    files: list[FileChange] = field(default_factory=list)

    @property
    def conflicts(self) -> list[FileChange]:
        return [f for f in self.files if f.restorable and f.changed_outside]


def plan_code(entries: Sequence[Entry], prompt_id: str) -> CodePlan:
    """Each file changed after the prompt: the state it had before the first change after it,
    and whether it was changed outside Peri since Peri's last change (blocking: reads files)."""
    plan = CodePlan(prompt_id)
    start = next((i for i, e in enumerate(entries) if e.id == prompt_id), None)
    if start is None:
        return plan
    first: dict[str, FileState] = {}
    last_after: dict[str, str | None] = {}
    for entry in entries[start:]:
        if not isinstance(entry, CheckpointEntry):
            continue
        for state in entry.files:
            if entry.phase == "before":
                first.setdefault(state.path, state)
                last_after.pop(state.path, None)  # a write began: its after is what counts
            else:
                last_after[state.path] = state.sha if state.note is None else "?"
    for path_text, before in first.items():
        path = Path(path_text)
        change = FileChange(path, before.sha, before.note)
        now = current_sha(path)
        change.unchanged = now is not False and now == before.sha
        change.changed_outside = path_text not in last_after or now != last_after[path_text]
        plan.files.append(change)
    return plan


def changed_counts(entries: Sequence[Entry], prompt_ids: Sequence[str]) -> dict[str, int]:
    """How many files Peri changed from each prompt on (for the picker: no file is read)."""
    wanted = set(prompt_ids)
    counts: dict[str, int] = {}
    seen: set[str] = set()
    for entry in reversed(entries):  # newest first: each prompt counts what came after it
        if isinstance(entry, CheckpointEntry) and entry.phase == "before":
            seen.update(state.path for state in entry.files)
        if entry.id in wanted:
            counts[entry.id] = len(seen)
    return counts


@dataclass
class CodeResult:
    restored: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)
    skipped: list[FileChange] = field(default_factory=list)  # changed outside, not overwritten
    records: list[CheckpointEntry] = field(default_factory=list)  # for the caller to append


def apply_code(
    checkpointer: Checkpointer, plan: CodePlan, *, overwrite: bool = False
) -> CodeResult:
    """Restore the plan's files (a file changed outside Peri only with `overwrite`); blocking,
    so run it in a thread and append `records` after. The current bytes are kept first, so the
    restore can itself be rewound."""
    result = CodeResult()
    todo = [f for f in plan.files if f.restorable and (overwrite or not f.changed_outside)]
    result.skipped = [f for f in plan.files if f.restorable and f not in todo]
    if not todo:
        return result
    kept = {s.path: s for s in checkpointer.keep(f.path for f in todo)}
    for change in todo:
        state = kept.get(str(change.path))
        if state is not None and state.note is not None:  # restoring would lose what it holds
            result.failed.append((change.path, f"not touched: {state.note}"))
            continue
        try:
            checkpointer.restore(change.path, change.target)
        except CheckpointError as e:
            result.failed.append((change.path, str(e)))
        else:
            result.restored.append(change.path)
    if result.restored:
        done = {str(p) for p in result.restored}
        before = [s for p, s in kept.items() if p in done]
        after = checkpointer.look(result.restored)
        result.records = [
            CheckpointEntry(phase="before", files=before, call_id=REWIND_CALL),
            CheckpointEntry(phase="after", files=after, call_id=REWIND_CALL),
        ]
    return result


# --- conversation ---------------------------------------------------------------------------------


def rewind_conversation(session: Session, prompt_id: str) -> RewindMarker:
    """Hide the prompt and everything after it from the view (the lines stay in the file)."""
    marker = RewindMarker(to=prompt_id)
    session.append(marker)
    return marker
