"""The core's events as the SDK's (`sdk.events`): one translation for programs and `peri -p`.

`Translator` also keeps what the prompt's `result` reports: the last reply's text, the model calls
made and the error that ended the run, if any."""

from __future__ import annotations

import time
from typing import Any

from peri_cli.agent.loop import Agent
from peri_cli.agent.subagents import ChildStateChanged
from peri_cli.base.events import (
    AssistantMessage,
    Compacted,
    CompactFailed,
    CompactWarning,
    Notice,
    ToolCall,
    ToolFinished,
    ToolProgress,
    TurnEnded,
    TurnStarted,
)
from peri_cli.base.events import Event as CoreEvent
from peri_cli.base.messages import dump_message
from peri_cli.base.models import cost_usd
from peri_cli.base.provider import TextDelta, ThinkingDelta
from peri_cli.base.retry import Retrying
from peri_cli.context.pressure import stable_prefix_share
from peri_cli.context.todos import TODO_TOOL, dump_todos, parse_todos
from peri_cli.sdk.events import (
    USAGE_KEYS,
    AssistantEvent,
    CompactEvent,
    Event,
    ResultEvent,
    ResultSubtype,
    SubagentEvent,
    SystemEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TodoEvent,
    ToolProgressEvent,
    ToolResultEvent,
    ToolUseEvent,
)


class Translator:
    """Core events in, SDK events out, for one prompt of one session."""

    def __init__(self, session_id: str, *, partial: bool = False) -> None:
        self.session_id = session_id
        self.partial = partial
        self.result = ""
        self.turns = 0
        self.error: str | None = None
        self.stop_reason: str | None = None  # of the main agent's last reply
        self.started = time.monotonic()  # when the prompt was sent (the client sets it)
        self.max_turns_hit = False
        self.structured_output: Any = None  # the accepted StructuredOutput answer, when given
        self.structured_given = False
        self.structured_failed = False  # asked for, and the retry failed too
        self._api_seconds = 0.0  # waiting for the main agent's replies
        self._asked_at: float | None = None  # the model call under way began then
        self._announced: set[str] = set()  # tool_use ids whose `tool_use` event was sent
        self._inputs: dict[str, dict[str, Any]] = {}  # of the current reply's tool calls
        self._child_inputs: dict[str, tuple[str, dict[str, Any]]] = {}  # SubAgents' running calls

    def event(self, event: CoreEvent) -> list[Event]:
        match event:
            case TurnStarted():
                self._asked_at = time.monotonic()
            case AssistantMessage(message=message, usage=usage, stop_reason=stop):
                if self._asked_at is not None:
                    self._api_seconds += time.monotonic() - self._asked_at
                    self._asked_at = None
                self.turns += 1
                self.stop_reason = stop
                self._inputs = {u.id: dict(u.input) for u in message.tool_uses}
                if message.text:
                    self.result = message.text
                return [
                    AssistantEvent(
                        session_id=self.session_id,
                        message=dump_message(message),
                        usage=usage.model_dump(),
                    )
                ]
            case ToolCall(id=id, name=name, input=input):
                return self._announce(id, name, input)
            case ToolFinished(id=id, name=name, output=output, is_error=is_error):
                out = self._announce(id, name, self._inputs.get(id, {}))
                result = ToolResultEvent(
                    tool_use_id=id, name=name, content=output, is_error=is_error
                )
                return [*out, result, *todo_event(name, self._inputs.get(id), is_error)]
            case Compacted() | CompactFailed() | CompactWarning():
                return [compact_event(event)]
            case Retrying(attempt=attempt, delay=delay, reason=reason):
                return [SystemEvent.of("retry", attempt=attempt, delay=delay, reason=reason)]
            case Notice(text=text, level=level):
                return [SystemEvent.of("notice", level=level, text=text)]
            case TurnEnded(reason=reason) if reason != "done":
                self.error = event.line
                self.max_turns_hit = reason == "max_turns"
            case TextDelta(text=text) if self.partial:
                return [TextDeltaEvent(text=text)]
            case ThinkingDelta(text=text) if self.partial:
                return [ThinkingDeltaEvent(text=text)]
            case ToolProgress(id=id, name=name, text=text) if self.partial:
                return [ToolProgressEvent(tool_use_id=id, name=name, text=text)]
        return []

    def _announce(self, call_id: str, name: str, tool_input: dict[str, Any]) -> list[Event]:
        """One `tool_use` event per call, before its result; refused calls get one too."""
        if call_id in self._announced:
            return []
        self._announced.add(call_id)
        return [ToolUseEvent(id=call_id, name=name, input=tool_input)]

    def child_event(
        self, child_id: str, event: CoreEvent | ChildStateChanged, parent: str | None = None
    ) -> list[Event]:
        """A SubAgent's state, replies and tool calls, as events carrying its id (`parent`: the
        Agent call that started it, named by its partial events)."""
        match event:
            case ChildStateChanged(state=state, detail=detail):
                line = SystemEvent.of("agent", agent_id=child_id, state=state, detail=detail)
                return [line, *self._child_partial(child_id, event, parent)]
            case AssistantMessage(message=message, usage=usage):
                return [
                    AssistantEvent(
                        agent_id=child_id, message=dump_message(message), usage=usage.model_dump()
                    )
                ]
            case ToolCall(id=id, name=name, input=input):
                self._child_inputs[id] = (child_id, input)
                used = ToolUseEvent(agent_id=child_id, id=id, name=name, input=input)
                return [used, *self._child_partial(child_id, event, parent)]
            case ToolFinished(id=id, name=name, output=output, is_error=is_error):
                result = ToolResultEvent(
                    agent_id=child_id,
                    tool_use_id=id,
                    name=name,
                    content=output,
                    is_error=is_error,
                )
                return [result, *todo_event(name, self._child_inputs.pop(id, None), is_error)]
            case TextDelta() | ThinkingDelta() | ToolProgress():
                return self._child_partial(child_id, event, parent)
        return []

    def _child_partial(self, child_id: str, event: object, parent: str | None) -> list[Event]:
        if not self.partial:
            return []
        match event:
            case ChildStateChanged(state="running"):
                return [
                    SubagentEvent(
                        subtype="started", agent_id=child_id, tool_use_id=parent, state="running"
                    )
                ]
            case ChildStateChanged(state=state, detail=detail) if state != "queued":
                return [
                    SubagentEvent(
                        subtype="finished",
                        agent_id=child_id,
                        tool_use_id=parent,
                        state=state,
                        detail=detail,
                    )
                ]
            case ToolCall(name=name):
                return [
                    SubagentEvent(
                        subtype="progress", agent_id=child_id, tool_use_id=parent, tool=name
                    )
                ]
            case TextDelta(text=text):
                return [TextDeltaEvent(agent_id=child_id, text=text)]
            case ThinkingDelta(text=text):
                return [ThinkingDeltaEvent(agent_id=child_id, text=text)]
            case ToolProgress(id=id, name=name, text=text):
                return [ToolProgressEvent(agent_id=child_id, tool_use_id=id, name=name, text=text)]
        return []

    def result_event(self, agent: Agent) -> ResultEvent:
        usage = agent.usage_total
        counts: dict[str, Any] = {key: getattr(usage, key) for key in USAGE_KEYS}
        if agent.usage_estimated:
            counts["estimated"] = True
        share = stable_prefix_share(agent.session.entries).share
        fields: dict[str, Any] = {
            "session_id": self.session_id,
            "result": self.result,
            "is_error": self.error is not None,
            "num_turns": self.turns,
            "usage": counts,
            "permission_denials": [
                {
                    "tool_name": d.tool_name,
                    "tool_use_id": d.tool_use_id,
                    "tool_input": d.tool_input,
                    "reason": d.reason,
                }
                for d in agent.denials
            ],
            "stable_prefix_share": None if share is None else round(share, 4),
        }
        if self.error is not None:
            fields["error"] = self.error
        cost = cost_usd(agent.model, usage)
        fields |= {
            "subtype": self._subtype(),
            "total_cost_usd": None if cost is None else round(cost, 6),
            "duration_ms": round((time.monotonic() - self.started) * 1000),
            "duration_api_ms": round(self._api_seconds * 1000),
        }
        if self.structured_given:
            fields["structured_output"] = self.structured_output
        return ResultEvent(**fields, stop_reason=self.stop_reason)

    def _subtype(self) -> ResultSubtype:
        if self.error is None:
            return "success"
        if self.structured_failed:
            return "error_max_structured_output_retries"
        if self.max_turns_hit or self.error.endswith("(--max-turns)"):
            return "error_max_turns"
        return "error_during_execution"


def todo_event(
    name: str, given: dict[str, Any] | tuple[str, dict[str, Any]] | None, is_error: bool
) -> list[Event]:
    """A `todo` event after a TodoWrite call that succeeded: the list its input set (`given`:
    the main agent's input, or a SubAgent's id and input)."""
    if name != TODO_TOOL or is_error or given is None:
        return []
    agent_id, tool_input = given if isinstance(given, tuple) else (None, given)
    todos = parse_todos(tool_input.get("todos"))
    if todos is None:
        return []
    if agent_id is None:
        return [TodoEvent(todos=dump_todos(todos))]
    return [TodoEvent(agent_id=agent_id, todos=dump_todos(todos))]


def compact_event(event: Compacted | CompactFailed | CompactWarning) -> CompactEvent:
    match event:
        case Compacted(strategy=s, tokens_before=b, tokens_after=a, affected=n, detail=d):
            return CompactEvent(
                strategy=s,
                tokens_before=b,
                tokens_after=a,
                affected=n,
                prefix_changed=event.prefix_changed,
                detail=d,
            )
        case CompactFailed(reason=reason):
            return CompactEvent(strategy="failed", error=reason)
    return CompactEvent(
        strategy="warning", pressure=round(event.pressure, 4), threshold=event.threshold
    )
