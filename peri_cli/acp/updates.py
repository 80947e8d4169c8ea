"""Peri's events as ACP `session/update`s, for a running prompt and for a replayed session.

One `Updates` per editor session: it remembers each tool call's name and input (its result
needs them for the diff) and each SubAgent's Agent call (the child's steps are shown as that
call's progress, also after a background child's call has answered)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    PlanEntry,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from peri_cli.acp.tools import (
    KindOf,
    diff_of,
    locations_of,
    other_kind,
    plain,
    text_content,
    title_of,
)
from peri_cli.sdk import (
    AssistantEvent,
    Event,
    SubagentEvent,
    SystemEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TodoEvent,
    ToolProgressEvent,
    ToolResultEvent,
    ToolUseEvent,
    UserEvent,
)

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
)
OUTPUT_CAP = 100_000  # characters of a tool's output shown in the editor


def plan(event: TodoEvent) -> AgentPlanUpdate:
    """The task list as ACP's plan: each entry's content and status; priority "medium", since
    ACP requires one and a TodoWrite list has none."""
    entries = [
        PlanEntry(content=str(t.get("content", "")), status=t["status"], priority="medium")
        for t in event.todos
        if t.get("status") in ("pending", "in_progress", "completed")
    ]
    return AgentPlanUpdate(session_update="plan", entries=entries)


def message(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
    )


def thought(text: str) -> AgentThoughtChunk:
    return AgentThoughtChunk(
        session_update="agent_thought_chunk", content=TextContentBlock(type="text", text=text)
    )


class Updates:
    def __init__(self, cwd: Path, kind_of: KindOf = other_kind) -> None:
        self.cwd, self.kind_of = cwd, kind_of
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}  # id -> (name, input)
        self.agents: dict[str, list[str]] = {}  # Agent call id -> its child's steps
        self.answers: dict[str, str] = {}  # Agent call id -> what the call answered
        self.parents: dict[str, str] = {}  # SubAgent id -> the Agent call that started it
        self.shown: set[str] = set()  # calls whose `tool_call` went out before their question

    def live(self, event: Event) -> list[Update]:
        """A running prompt's event: text streams as deltas, so whole replies add nothing."""
        match event:
            case TextDeltaEvent(agent_id=None, text=text) if text:
                return [message(text)]
            case ThinkingDeltaEvent(agent_id=None, text=text) if text:
                return [thought(text)]
            case ToolUseEvent(agent_id=None):
                return self.started(event)
            case ToolResultEvent(agent_id=None):
                return self.finished(event)
            case TodoEvent(agent_id=None):
                return [plan(event)]
            case ToolProgressEvent(agent_id=None, text=text):
                return [
                    ToolCallProgress(
                        session_update="tool_call_update",
                        tool_call_id=event.tool_use_id,
                        content=[text_content(text[-OUTPUT_CAP:])],
                    )
                ]
            case ToolUseEvent(agent_id=str(child)) | SubagentEvent(agent_id=child):
                return self._child(child, event)
            case SystemEvent(subtype="notice") if event.data.get("level") != "info":
                return [message(f"\n\n> {plain(str(event.data.get('text', '')), 1000)}\n\n")]
        return []

    def replayed(self, event: Event) -> list[Update]:
        """A stored session's event, as `session/load` shows it again."""
        match event:
            case UserEvent(text=text):
                return [
                    UserMessageChunk(
                        session_update="user_message_chunk",
                        content=TextContentBlock(type="text", text=text),
                    )
                ]
            case AssistantEvent(agent_id=None):
                return _reply(event)
            case ToolUseEvent(agent_id=None):
                return self.started(event)
            case ToolResultEvent(agent_id=None):
                return self.finished(event)
            case TodoEvent(agent_id=None):
                return [plan(event)]
        return []

    def asked(self, call_id: str, name: str, tool_input: dict[str, Any]) -> list[Update]:
        """The call's `tool_call`, sent before the permission question about it (the editor
        shows the question on a call it knows); once."""
        if call_id in self.shown or call_id in self.calls:
            return []
        self.shown.add(call_id)
        return [self._start(call_id, name, tool_input)]

    def _start(self, call_id: str, name: str, tool_input: dict[str, Any]) -> ToolCallStart:
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=title_of(name, tool_input, self.cwd),
            kind=self.kind_of(name),
            status="pending",
            locations=locations_of(name, tool_input, self.cwd) or None,
            raw_input=tool_input,
        )

    def started(self, event: ToolUseEvent) -> list[Update]:
        self.calls[event.id] = (event.name, dict(event.input))
        if event.name == "Agent":
            self.agents[event.id] = []
        running = ToolCallProgress(
            session_update="tool_call_update", tool_call_id=event.id, status="in_progress"
        )
        if event.id in self.shown:  # announced with its question already
            return [running]
        return [self._start(event.id, event.name, event.input), running]

    def finished(self, event: ToolResultEvent) -> list[Update]:
        name, tool_input = self.calls.pop(event.tool_use_id, (event.name, {}))
        self.shown.discard(event.tool_use_id)
        content = [] if event.is_error else diff_of(name, tool_input, self.cwd)
        output = event.content[:OUTPUT_CAP]
        if event.tool_use_id in self.agents:
            self.answers[event.tool_use_id] = output
        if not content and output:
            content = [text_content(output)]
        return [
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=event.tool_use_id,
                status="failed" if event.is_error else "completed",
                content=content,
                # an object, never a string: editors (toad) drop a result whose rawOutput is one
                raw_output={"output": output, "is_error": event.is_error},
            )
        ]

    def _child(self, child: str, event: ToolUseEvent | SubagentEvent) -> list[Update]:
        """A SubAgent's step, as progress of the Agent call that started it."""
        if isinstance(event, SubagentEvent) and event.tool_use_id in self.agents:
            self.parents[child] = event.tool_use_id
        parent = self.parents.get(child)
        if parent is None:
            return []
        if isinstance(event, ToolUseEvent):
            line = f"{child}: {title_of(event.name, event.input, self.cwd)}"
        elif event.subtype == "finished":
            line = f"{child}: {event.state or 'done'}"
        else:
            return []
        steps = self.agents[parent]
        steps.append(line)
        answer = self.answers.get(parent)
        shown = [text_content(answer)] if answer else []
        return [
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=parent,
                content=[*shown, text_content("\n".join(steps[-50:]))],
            )
        ]


def _reply(event: AssistantEvent) -> list[Update]:
    out: list[Update] = []
    for block in event.message.get("content") or []:
        if block.get("type") == "thinking" and block.get("thinking"):
            out.append(thought(str(block["thinking"])))
        elif block.get("type") == "text" and block.get("text"):
            out.append(message(str(block["text"])))
    return out
