"""Pure: transcript entries -> what the conversation shows, oldest first.

The whole record is shown (also what /clear or a Full compact hid from the model), with
separators where those happened; tool results are folded into their calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from peri_cli.session.transcript import Entry, MessageEntry


@dataclass
class UserItem:
    text: str


@dataclass
class AssistantItem:
    text: str
    thinking: str = ""


@dataclass
class ToolItem:
    id: str
    name: str
    input: dict[str, Any]
    output: str | None = None  # None: no result was recorded
    is_error: bool = False


@dataclass
class SeparatorItem:
    strategy: Literal["micro", "full", "clear"]
    tokens_before: int | None = None
    tokens_after: int | None = None
    affected: int = 0
    detail: str = ""
    summary: str = ""  # a Full compact's summary: the separator expands to show it


@dataclass
class SummaryItem:
    """A message Peri wrote into the history itself: a compaction summary or re-injected files."""

    title: str
    text: str


@dataclass
class NoticeItem:
    """A line Peri recorded about the session, not a message: a turn that was stopped or failed
    (what the model was told about it)."""

    text: str
    level: Literal["info", "warning", "error"] = "warning"


Item = UserItem | AssistantItem | ToolItem | SeparatorItem | SummaryItem | NoticeItem


@dataclass
class _Builder:
    items: list[Item] = field(default_factory=list)
    tools: dict[str, ToolItem] = field(default_factory=dict)


SUMMARY_TITLE = "Summary of the earlier conversation (what the model sees now)"
REINJECT_TITLE = "Files and skills re-injected after the compaction"
WORKING_STATE_TITLE = "The working state Peri kept at the compaction"
REFUSED_HEAD = "Left out of the conversation, the provider refused it: "
ATTACHED_TITLE = "Attached to the prompt (@ files, pasted images)"
SHELL_TITLE = "Your shell command (!) and its output, as the model sees it"


def _origin_title(entry: MessageEntry, summaries: set[str]) -> str | None:
    from peri_cli.agent.attachments import ORIGIN_ATTACHMENT, ORIGIN_SHELL
    from peri_cli.context.micro import ORIGIN_REINJECT, ORIGIN_SUMMARY, ORIGIN_WORKING_STATE

    origin = (entry.model_extra or {}).get("origin")
    if origin == ORIGIN_SUMMARY:
        return SUMMARY_TITLE
    if origin == ORIGIN_REINJECT:
        return REINJECT_TITLE
    if origin == ORIGIN_WORKING_STATE:
        return WORKING_STATE_TITLE
    if origin == ORIGIN_ATTACHMENT:
        return ATTACHED_TITLE
    if origin == ORIGIN_SHELL:
        return SHELL_TITLE
    return SUMMARY_TITLE if entry.id in summaries else None


def display_items(entries: Sequence[Entry]) -> list[Item]:
    # The core is imported here, not at the top: the shell draws before it is loaded.
    from peri_cli.session.rewind import hidden_ids
    from peri_cli.session.transcript import (
        ClearMarker,
        CompactBoundary,
        Interruption,
        MessageEntry,
        ProjectionEntry,
        Refusal,
    )

    hidden = hidden_ids(entries)  # a /rewind hid them from the screen too
    summaries = {e.summary_id for e in entries if isinstance(e, CompactBoundary)}
    texts = {
        e.id: e.message.text for e in entries if isinstance(e, MessageEntry) and e.id in summaries
    }
    b = _Builder()
    for entry in entries:
        if entry.id in hidden:
            continue
        if isinstance(entry, MessageEntry):
            if entry.id in summaries:
                continue  # shown in its compaction's separator
            _message(b, entry, _origin_title(entry, summaries))
        elif isinstance(entry, ClearMarker):
            b.items.append(SeparatorItem("clear"))
        elif isinstance(entry, CompactBoundary):
            b.items.append(
                SeparatorItem(
                    "full",
                    entry.tokens_before,
                    entry.tokens_after,
                    entry.excluded_messages,
                    f"focus: {entry.focus}" if entry.focus else "",
                    texts.get(entry.summary_id, ""),
                )
            )
        elif isinstance(entry, Interruption):
            # one dim line; the note (`entry.text`) is the model's
            stopped = "Interrupted" if entry.reason == "cancelled" else "Stopped by an error"
            b.items.append(NoticeItem(stopped, "info" if entry.reason == "cancelled" else "error"))
        elif isinstance(entry, Refusal):  # what it left out stays on screen, above it
            b.items.append(NoticeItem(f"{REFUSED_HEAD}{entry.error}", "error"))
        elif isinstance(entry, ProjectionEntry):
            b.items.append(
                SeparatorItem(
                    "micro", entry.tokens_before, entry.tokens_after, len(entry.directives)
                )
            )
    return b.items


def summary_text(entries: Sequence[Entry]) -> str:
    """The text of the summary the last Full compact recorded ("" if none)."""
    from peri_cli.session.transcript import CompactBoundary, MessageEntry

    boundary = next((e for e in reversed(entries) if isinstance(e, CompactBoundary)), None)
    if boundary is None:
        return ""
    for entry in reversed(entries):
        if isinstance(entry, MessageEntry) and entry.id == boundary.summary_id:
            return entry.message.text
    return ""


def _message(b: _Builder, entry: MessageEntry, origin_title: str | None) -> None:
    from peri_cli.base.messages import TextPart, ThinkingPart, ToolResultPart, ToolUsePart

    message = entry.message
    if origin_title is not None:
        b.items.append(SummaryItem(origin_title, message.text))
        return
    if message.role == "user":
        for part in message.content:
            if isinstance(part, ToolResultPart):
                tool = b.tools.get(part.tool_use_id)
                if tool is not None:
                    tool.output, tool.is_error = part.text, part.is_error
        if message.text.strip():
            b.items.append(UserItem(message.text))
        return
    thinking = "".join(p.thinking for p in message.content if isinstance(p, ThinkingPart))
    text = "".join(p.text for p in message.content if isinstance(p, TextPart))
    if text.strip() or thinking.strip():
        b.items.append(AssistantItem(text, thinking))
    for part in message.content:
        if isinstance(part, ToolUsePart):
            tool = ToolItem(part.id, part.name, dict(part.input))
            b.tools[part.id] = tool
            b.items.append(tool)
