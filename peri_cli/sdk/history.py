"""A session's conversation as events, for a face that shows it again (an editor's
`session/load`): the person's prompts, the model's replies and each tool call with its result (and
the task list a TodoWrite set)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from peri_cli.base.messages import TextPart, dump_message
from peri_cli.sdk.events import AssistantEvent, Event, ToolResultEvent, ToolUseEvent, UserEvent
from peri_cli.sdk.translate import todo_event
from peri_cli.session.transcript import Entry, MessageEntry
from peri_cli.session.turns import is_typed


def replay(entries: Sequence[Entry], session_id: str) -> list[Event]:
    """Every message entry in the order written; a user message Peri added itself (an
    attachment, compaction's summary) is left out, as the TUI does not show it as typed."""
    out: list[Event] = []
    names: dict[str, str] = {}  # tool_use id -> tool name, for the results
    inputs: dict[str, dict[str, Any]] = {}  # tool_use id -> input (a TodoWrite's list)
    for entry in entries:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if message.role == "assistant":
            out.append(
                AssistantEvent(
                    session_id=session_id,
                    message=dump_message(message),
                    usage=(entry.usage.model_dump() if entry.usage else {}),
                )
            )
            for use in message.tool_uses:
                names[use.id] = use.name
                inputs[use.id] = dict(use.input)
                out.append(ToolUseEvent(id=use.id, name=use.name, input=dict(use.input)))
            continue
        for part in message.tool_results:
            name = names.get(part.tool_use_id, "")
            out.append(
                ToolResultEvent(
                    tool_use_id=part.tool_use_id,
                    name=name,
                    content=part.text,
                    is_error=part.is_error,
                )
            )
            out += todo_event(name, inputs.get(part.tool_use_id), part.is_error)
        if is_typed(entry):
            text = "".join(p.text for p in message.content if isinstance(p, TextPart))
            if text:
                out.append(UserEvent(session_id=session_id, text=text))
    return out
