"""Pure: transcript entries -> the messages the model sees. Never changes a stored entry."""

from __future__ import annotations

from collections.abc import Sequence

from peri_cli.core.messages import Message, ToolResultPart, ToolUsePart
from peri_cli.core.transcript import ClearMarker, CompactBoundary, Entry, MessageEntry


def visible_entries(entries: Sequence[Entry]) -> list[MessageEntry]:
    """Message entries after the last /clear and not excluded by a Full-compact boundary."""
    visible: list[MessageEntry] = []
    for entry in entries:
        if isinstance(entry, MessageEntry):
            visible.append(entry)
        elif isinstance(entry, ClearMarker):
            visible = []
        elif isinstance(entry, CompactBoundary):
            ids = [e.id for e in visible]
            if entry.summary_id in ids:
                visible = visible[ids.index(entry.summary_id) :]
    return visible


def normalize(messages: list[Message]) -> list[Message]:
    """Make a history the APIs accept: user first, roles alternating, every tool_use answered.

    A user prompt committed before a failed turn leaves two user messages in a row; they merge.
    A tool_use whose results never landed (a torn write) is dropped, as is an orphan tool_result.
    """
    paired: list[Message] = []
    for i, message in enumerate(messages):
        if message.role == "assistant" and message.tool_uses:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = {r.tool_use_id for r in nxt.tool_results} if nxt else set()
            keep = [
                p
                for p in message.content
                if not isinstance(p, ToolUsePart) or p.id in answered
            ]
            message = Message(role="assistant", content=keep)
        elif message.role == "user" and message.tool_results:
            prev = paired[-1] if paired else None
            asked = {u.id for u in prev.tool_uses} if prev and prev.role == "assistant" else set()
            keep = [
                p
                for p in message.content
                if not isinstance(p, ToolResultPart) or p.tool_use_id in asked
            ]
            message = Message(role="user", content=keep)
        if not message.content:
            continue
        if paired and paired[-1].role == message.role:
            paired[-1] = Message(role=message.role, content=[*paired[-1].content, *message.content])
        else:
            paired.append(message)
    while paired and paired[0].role != "user":
        paired.pop(0)
    return paired


def project(entries: Sequence[Entry]) -> list[Message]:
    return normalize([e.message for e in visible_entries(entries)])
