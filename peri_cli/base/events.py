"""Typed events the loop yields; the TUI routes them in one `match`, headless prints them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from peri_cli.base.messages import Message, Usage
from peri_cli.base.provider import TextDelta, ThinkingDelta, ToolUseStarted
from peri_cli.base.questions import Asking
from peri_cli.base.retry import Retrying


@dataclass(frozen=True)
class TurnStarted:
    turn: int  # model calls so far in this run, 1-based


@dataclass(frozen=True)
class AssistantMessage:
    """A complete reply. Its tool calls run next; it is committed with their results."""

    message: Message
    usage: Usage
    stop_reason: str
    estimated: bool = False  # the provider reported no usage; `usage` is Peri's count


USER_SHELL_ID = "user_shell_"  # how the call ids of the user's `!` commands begin (shown open)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolProgress:
    """A running call's output so far (its latest tail; each one replaces the one before)."""

    id: str
    name: str
    text: str


@dataclass(frozen=True)
class ToolFinished:
    id: str
    name: str
    output: str
    is_error: bool


# allow once; allow what `suggestions` cover for the session, or always in this project; deny
PermissionAnswer = Literal["allow", "allow_session", "allow_project", "deny"]


@dataclass
class PermissionRequested:
    """Asking the user; whoever handles the event sets the future's result."""

    tool: str
    input: dict[str, Any]
    reason: str
    future: asyncio.Future[PermissionAnswer] = field(repr=False)
    agent: str | None = None  # the SubAgent asking (its label), None for the main agent
    suggestions: list[str] = field(default_factory=list)  # rules "allow for the session" adds
    deny_note: str = ""  # set before answering "deny": what the model is told instead
    tool_use_id: str = ""  # the call asked about
    updated_input: dict[str, Any] | None = None  # set before allowing: what runs instead
    # Set before answering "allow_project": the settings layer that keeps it ("local",
    # "project", "user"); empty: the local one. Only the sandbox's Network question reads it.
    keep_in: str = ""
    # A question with options (AskUserQuestion, ExitPlanMode's approval), not a permission:
    # the face shows these; a denial's `deny_note` is then the model's whole message.
    asking: Asking | None = None
    # Set by the answerer: end the turn after this round (headless: the plan is the result).
    ends_turn: bool = False


@dataclass(frozen=True)
class Compacted:
    strategy: Literal["micro", "full", "clear"]
    tokens_before: int | None
    tokens_after: int | None
    affected: int
    detail: str = ""
    # Tokens of the next request from the first changed message on: what the provider's prompt
    # cache must write again (None: not measured).
    prefix_changed: int | None = None


@dataclass(frozen=True)
class UsageSpent:
    """Tokens a request outside the turn's own reply cost (a compaction's summary); whoever runs
    the agent adds them to its totals."""

    usage: Usage


@dataclass(frozen=True)
class CompactFailed:
    reason: str


@dataclass(frozen=True)
class CompactWarning:
    pressure: float
    threshold: float


@dataclass(frozen=True)
class Notice:
    text: str
    level: Literal["info", "warning", "error"] = "info"


# "stopped": a hook answered `"continue": false`; `error` is its `stopReason` (CONTRACT.md §12)
TurnEndReason = Literal[
    "done", "max_turns", "cancelled", "error", "compact_stalled", "blocked", "stopped"
]


@dataclass(frozen=True)
class TurnEnded:
    """How a turn ended. After a failed model call, `next_step` says what the user can do, and
    `left_out` names what a refused request added that is not sent again ("prompt": the
    prompt and its attachments; "results": the last tool round)."""

    reason: TurnEndReason
    error: str | None = None
    next_step: str | None = None
    left_out: Literal["prompt", "results"] | None = None

    @property
    def line(self) -> str:
        """What went wrong and what to do next, as every face shows it."""
        what = self.error or self.reason
        return f"{what.rstrip('. ')}. {self.next_step}" if self.next_step else what


Event = (
    TurnStarted
    | TextDelta
    | ThinkingDelta
    | ToolUseStarted
    | Retrying
    | AssistantMessage
    | ToolCall
    | ToolProgress
    | ToolFinished
    | PermissionRequested
    | Compacted
    | UsageSpent
    | CompactFailed
    | CompactWarning
    | Notice
    | TurnEnded
)
