"""The append-only JSONL transcript's entry types and their one-line JSON form (the file itself is
read and written by `transcript_file`).

A past line is never rewritten. Compaction, /clear and projections are recorded as new entries that
refer to earlier ids; `projection.project` turns entries into the model's view.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from peri_cli.base.ids import uuid7
from peri_cli.base.messages import Message, Usage

HEADER_VERSION = 1


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    id: str = Field(default_factory=uuid7)
    ts: str = Field(default_factory=now_iso)


class Snapshot(BaseModel):
    """The frozen base prompt and what it was built from; reused byte for byte all session long."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    system: str
    guide_files: list[str] = []
    guide_warnings: list[str] = []
    skills: list[str] = []
    meta_harness: dict[str, bool] = {}
    output_style: str | None = None  # the output style's name (None: the default)


class ParentRef(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    session_id: str
    forked_at: str | None = None  # id of the parent's last entry that was copied


class AgentRef(BaseModel):
    """What a SubAgent's transcript header records about where it came from."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    parent_session: str
    tool_use_id: str
    type: str
    description: str = ""
    background: bool = False


class Header(_Entry):
    type: Literal["header"] = "header"
    version: int = HEADER_VERSION
    session_id: str
    workspace: str
    snapshot: Snapshot
    parent: ParentRef | None = None
    agent: AgentRef | None = None  # set in a SubAgent's own transcript


class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: Message
    usage: Usage | None = None
    model: str | None = None
    cache_read_share: float | None = None  # of the request that produced this assistant message
    usage_estimated: bool = False  # the provider reported no usage; Peri counted it


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


class Interruption(_Entry):
    """A turn that was cancelled or failed before its reply was committed. The model sees `text`
    as a user-side note, so it knows which calls ran and that their results were not kept."""

    type: Literal["interruption"] = "interruption"
    reason: Literal["cancelled", "failed"]
    text: str
    # Whether the model's reply had begun (its text streaming, its tools running); None in
    # entries written before this was recorded.
    replied: bool | None = None


class Refusal(_Entry):
    """A request the provider refused for what it carried (400/413). What it had added since
    the last request the provider accepted (`ids`: a prompt and its attachments, or a tool
    round) is left out of the model's view, so it is never sent again; the lines stay. `text`,
    when set, is a user-side note the model reads in their place."""

    type: Literal["refused"] = "refused"
    ids: list[str]
    error: str
    status: int | None = None
    text: str = ""


AgentState = Literal["queued", "running", "done", "failed", "interrupted"]


class AgentStatus(_Entry):
    """A SubAgent's state change, appended to its own transcript (the header is never rewritten).
    A child whose last status is `running` was killed with its parent: it loads as interrupted."""

    type: Literal["agent_status"] = "agent_status"
    status: AgentState
    detail: str = ""


class FileState(BaseModel):
    """One file at one moment: its resolved path and the sha256 of its bytes (None: absent)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    path: str
    sha: str | None = None
    note: str | None = None  # why its bytes were not kept (too large, not a regular file)


class CheckpointEntry(_Entry):
    """Files a write is about to change (`phase="before"`, their bytes kept content-addressed in
    `<session>/checkpoints/`) or has changed (`phase="after"`, what Peri left there), so /rewind
    can restore them and tell a later change made outside Peri."""

    type: Literal["checkpoint"] = "checkpoint"
    phase: Literal["before", "after"]
    files: list[FileState]
    call_id: str = ""  # the tool call, or "rewind" for a restore
    agent: str | None = None  # the SubAgent that wrote, None for the main agent


class RewindMarker(_Entry):
    """/rewind of the conversation: the prompt `to` and everything after it up to here are
    hidden from the view (the lines stay in the file, like /clear)."""

    type: Literal["rewind"] = "rewind"
    to: str


class TornLineRepair(_Entry):
    """Written when a writer finds a torn last line: the fragment above it is skipped on load."""

    type: Literal["repair"] = "repair"
    skipped_bytes: int


Entry = Annotated[
    Header
    | MessageEntry
    | ProjectionEntry
    | CompactBoundary
    | ClearMarker
    | Interruption
    | Refusal
    | AgentStatus
    | CheckpointEntry
    | RewindMarker
    | TornLineRepair,
    Field(discriminator="type"),
]


@cache
def _entry_adapter() -> TypeAdapter[Entry]:
    """Built on first use: schema building is deferred off the start-up path."""
    return TypeAdapter(Entry)


def dump_entry(entry: BaseModel) -> str:
    return json.dumps(entry.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def parse_entry(line: str) -> Entry:
    return _entry_adapter().validate_json(line)
