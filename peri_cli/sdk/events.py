"""The events a program sees (CONTRACT.md §8): one pydantic model per kind, told apart by `type`.

`to_json()` is the event's `stream-json` line (§2), byte for byte: `peri -p` prints exactly that,
so the SDK and the headless face share one definition. A field that was not given is left out of
the line (a SubAgent's lines carry `agent_id`, the main agent's do not); a field given as None is
printed as `null`. `parse_event(line)` reads a line back into its model.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from peri_cli.sdk.blocks import ContentBlock, ToolResultBlock, blocks_of


class _EventBase(BaseModel):
    model_config = ConfigDict(frozen=True)

    def to_dict(self) -> dict[str, Any]:
        """The event as its `stream-json` object: `type` first, then the fields given."""
        fields = self.model_dump(exclude_unset=True, exclude={"type"})
        return {"type": getattr(self, "type"), **fields}  # noqa: B009 - every kind has one

    def to_json(self) -> str:
        """The event's `stream-json` line (without the newline)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


class SystemEvent(_EventBase):
    """`system` lines: `init` (session_id, model, provider, tools, permission_mode), `retry`,
    `notice`, `mcp`, `agent` (a SubAgent's state), `clear`. Their other fields vary by subtype
    and are kept in the order given."""

    model_config = ConfigDict(frozen=True, extra="allow")
    type: Literal["system"] = "system"
    subtype: str

    @classmethod
    def of(cls, subtype: str, **fields: Any) -> SystemEvent:
        """A `system` event of `subtype` with its fields, in the order given."""
        return cls.model_validate({"subtype": subtype, **fields})

    @property
    def data(self) -> dict[str, Any]:
        """The subtype's own fields."""
        return dict(self.model_extra or {})


class AssistantEvent(_EventBase):
    """A complete reply of the model (a SubAgent's carries its `agent_id` instead of the
    session id)."""

    type: Literal["assistant"] = "assistant"
    agent_id: str | None = None
    session_id: str | None = None
    message: dict[str, Any]
    usage: dict[str, Any]

    @property
    def text(self) -> str:
        content = self.message.get("content") or []
        return "".join(b.get("text", "") for b in content if b.get("type") == "text")

    @property
    def content(self) -> list[ContentBlock]:
        """The reply as the Claude Agent SDK's blocks (`TextBlock`, `ThinkingBlock`,
        `ToolUseBlock`); not part of the line."""
        return blocks_of(list(self.message.get("content") or []))


class UserEvent(_EventBase):
    """A prompt the person typed; only in a session's replay (`PeriClient.history()`), never
    in a running prompt's stream."""

    type: Literal["user"] = "user"
    session_id: str
    text: str


class ToolUseEvent(_EventBase):
    type: Literal["tool_use"] = "tool_use"
    agent_id: str | None = None
    id: str
    name: str
    input: dict[str, Any]


class ToolResultEvent(_EventBase):
    type: Literal["tool_result"] = "tool_result"
    agent_id: str | None = None
    tool_use_id: str
    name: str
    content: str
    is_error: bool

    @property
    def block(self) -> ToolResultBlock:
        """The result as the Claude Agent SDK's `ToolResultBlock`; not part of the line."""
        return ToolResultBlock(
            tool_use_id=self.tool_use_id, content=self.content, is_error=self.is_error
        )


class TodoEvent(_EventBase):
    """The task list as a `TodoWrite` call just set it (each item `content`, `status`:
    pending, in_progress or completed, `activeForm`); a SubAgent's carries its `agent_id`."""

    type: Literal["todo"] = "todo"
    agent_id: str | None = None
    todos: list[dict[str, Any]]


class CompactEvent(_EventBase):
    """A compaction (`micro`, `full`, `clear`), a failed one (`failed`, with `error`) or a
    pressure warning (`warning`, with `pressure` and `threshold`)."""

    type: Literal["compact"] = "compact"
    strategy: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    affected: int | None = None
    prefix_changed: int | None = None
    detail: str | None = None
    error: str | None = None
    pressure: float | None = None
    threshold: float | None = None


CANCELLED = "cancelled"  # the error of a prompt stopped by `interrupt()`
ResultSubtype = Literal[
    "success", "error_max_turns", "error_during_execution", "error_max_structured_output_retries"
]


class ResultEvent(_EventBase):
    """The last event of a prompt: what `--output-format json` prints (CONTRACT.md §2).

    `stop_reason`: why the model's last reply ended (`end_turn`, `tool_use`, `max_tokens`,
    `stop_sequence`, `refusal`, `other`; None when no reply came), for a program to read; it is
    not part of the line, so `peri -p` prints what it always printed.

    As the Claude Agent SDK's result: `subtype` (`success`, `error_max_turns`,
    `error_during_execution`, `error_max_structured_output_retries`), `total_cost_usd` (list
    price of `usage` for the session's model; None when its price is unknown), `duration_ms`
    (from `send()` to the result), `duration_api_ms` (the part spent waiting for the model's
    replies) and, for a prompt that asked for structured output (`output_format`),
    `structured_output`: the accepted JSON value (in the line only when one was accepted;
    None here otherwise)."""

    type: Literal["result"] = "result"
    session_id: str
    result: str
    is_error: bool
    num_turns: int
    usage: dict[str, Any]
    permission_denials: list[dict[str, Any]]
    stable_prefix_share: float | None = None
    error: str | None = None
    subtype: ResultSubtype = "success"
    total_cost_usd: float | None = None
    duration_ms: int = 0
    duration_api_ms: int = 0
    structured_output: Any = None
    stop_reason: str | None = Field(default=None, exclude=True)

    @property
    def cancelled(self) -> bool:
        """The prompt was stopped by `interrupt()` (or Ctrl+C in `peri -p`)."""
        return self.error == CANCELLED

    @classmethod
    def failure(cls, session_id: str, message: str) -> ResultEvent:
        """The result of a run that failed before it started."""
        return cls(
            session_id=session_id,
            result="",
            is_error=True,
            num_turns=0,
            usage=dict.fromkeys(USAGE_KEYS, 0),
            permission_denials=[],
            stable_prefix_share=None,
            error=message,
            subtype="error_during_execution",
            total_cost_usd=None,
            duration_ms=0,
            duration_api_ms=0,
        )


USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


class TextDeltaEvent(_EventBase):
    """A piece of the reply's text as it streams (only with `include_partial_messages`)."""

    type: Literal["text_delta"] = "text_delta"
    agent_id: str | None = None
    text: str


class ThinkingDeltaEvent(_EventBase):
    """A piece of the model's thinking as it streams (only with `include_partial_messages`)."""

    type: Literal["thinking_delta"] = "thinking_delta"
    agent_id: str | None = None
    text: str


class ToolProgressEvent(_EventBase):
    """A running tool call's output so far (a Bash command's latest tail; each one replaces
    the one before); only with `include_partial_messages`."""

    type: Literal["tool_progress"] = "tool_progress"
    agent_id: str | None = None
    tool_use_id: str
    name: str
    text: str


class SubagentEvent(_EventBase):
    """A SubAgent `started`, made `progress` (a tool call) or `finished` (state `done`,
    `failed` or `interrupted`); only with `include_partial_messages`. `tool_use_id`: the
    parent's Agent call that started it."""

    type: Literal["subagent"] = "subagent"
    subtype: Literal["started", "progress", "finished"]
    agent_id: str
    tool_use_id: str | None = None
    state: str | None = None
    detail: str | None = None
    tool: str | None = None


Event = Annotated[
    SystemEvent
    | AssistantEvent
    | ToolUseEvent
    | ToolResultEvent
    | TodoEvent
    | CompactEvent
    | ResultEvent
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | SubagentEvent
    | ToolProgressEvent
    | UserEvent,
    Field(discriminator="type"),
]

PARTIAL_TYPES = frozenset({"text_delta", "thinking_delta", "subagent", "tool_progress"})

_ADAPTER: TypeAdapter[Event] | None = None


def parse_event(line: str | dict[str, Any]) -> Event:
    """A `stream-json` line (or its object) as its event model."""
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = TypeAdapter(Event)
    data = json.loads(line) if isinstance(line, str) else line
    return _ADAPTER.validate_python(data)
