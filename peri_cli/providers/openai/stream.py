"""One streamed Chat Completions reply, from the chunks real servers send: text, reasoning and
tool calls (told apart by index, id or name) become Peri's stream events, and the assistant
message with its stop reason and usage at the end. Every call gets an id of Peri's own."""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass
from typing import Any

from peri_cli.base.messages import Message, Part, TextPart, ThinkingPart, ToolUsePart, Usage
from peri_cli.base.provider import (
    MessageCompleted,
    StopReason,
    StreamEvent,
    StreamInterrupted,
    TextDelta,
    ThinkingDelta,
    ToolUseStarted,
)
from peri_cli.providers.common import parse_tool_input

ID_ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 9  # Mistral's servers accept only 9 alphanumerics; everyone else takes any string
MALFORMED = "the server sent a malformed stream event"

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def new_call_id() -> str:
    """A tool-call id unique in the session, whatever ids (or none, or duplicates) a server sent."""
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


@dataclass
class _Call:
    id: str  # Peri's own id, fresh for every call
    server_id: str = ""  # the server's, only to tell its calls apart while they stream
    name: str = ""
    arguments: str = ""
    announced: bool = False


class StreamedReply:
    """Accumulates one streamed reply from Chat Completions chunks, as real servers send them:
    choice 0 only; tool calls told apart by index or, without one, by a new id or a new name
    after arguments; names split over chunks joined; arguments sent as an object serialized."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[_Call] = []
        self.by_index: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        try:
            return self._feed(chunk)
        except (AttributeError, TypeError, ValueError) as e:  # valid JSON of the wrong shape
            raise StreamInterrupted(f"{MALFORMED} ({type(e).__name__})") from e

    def _feed(self, chunk: Any) -> list[StreamEvent]:
        if chunk is None or isinstance(chunk, str | int | float | list):
            raise TypeError(f"{type(chunk).__name__} where a chunk object belongs")
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = _usage(usage) or self.usage
        choices = getattr(chunk, "choices", None) or []  # a usage-only chunk may have none
        out: list[StreamEvent] = []
        for choice in choices:
            if (getattr(choice, "index", 0) or 0) != 0:
                continue  # n > 1 is never asked for; a server that sends more is ignored
            delta = getattr(choice, "delta", None)
            if delta is not None:
                out.extend(self._delta(delta))
            if getattr(choice, "finish_reason", None):
                self.finish_reason = str(choice.finish_reason)
        return out

    def _delta(self, delta: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        # Compatible servers stream reasoning as an extra field (vLLM, DeepSeek, llama.cpp).
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            out.append(ThinkingDelta(reasoning))
        content = getattr(delta, "content", None)
        if isinstance(content, str) and content:
            self.text.append(content)
            out.append(TextDelta(content))
        for tc in getattr(delta, "tool_calls", None) or []:
            out.extend(self._tool_call_delta(tc))
        return out

    def _tool_call_delta(self, tc: Any) -> list[StreamEvent]:
        index = getattr(tc, "index", None)
        server_id = getattr(tc, "id", None)
        server_id = server_id if isinstance(server_id, str) else ""
        function = getattr(tc, "function", None)
        name = getattr(function, "name", None)
        name = name if isinstance(name, str) else ""
        arguments = getattr(function, "arguments", None)
        out: list[StreamEvent] = []
        key = index if isinstance(index, int) else None
        last = self.calls[-1] if self.calls else None
        call = self.by_index.get(key) if key is not None else last
        if call is None or _starts_another(call, server_id, name):
            out.extend(self._announce_all())
            call = _Call(id=new_call_id(), server_id=server_id)
            self.calls.append(call)
            if key is not None:
                self.by_index[key] = call
        call.server_id = call.server_id or server_id
        if name and name != call.name:  # a server that repeats the whole name adds nothing
            call.name += name
        if isinstance(arguments, (dict, list)):  # Ollama, some proxies: an object, not a string
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            call.arguments += arguments
            out.extend(self._announce(call))  # the name is complete once arguments flow
        return out

    def _announce(self, call: _Call) -> list[StreamEvent]:
        if call.announced or not call.name:
            return []
        call.announced = True
        return [ToolUseStarted(id=call.id, name=call.name)]

    def _announce_all(self) -> list[StreamEvent]:
        return [e for call in self.calls for e in self._announce(call)]

    def finish(self) -> list[StreamEvent]:
        """The announcements still due, then the MessageCompleted; an unfinished reply raises."""
        if self.finish_reason is None:
            raise StreamInterrupted()
        out = self._announce_all()
        parts: list[Part] = []
        if self.reasoning:
            parts.append(ThinkingPart(thinking="".join(self.reasoning)))
        if self.text:
            parts.append(TextPart(text="".join(self.text)))
        calls = [c for c in self.calls if c.name]
        for call in calls:
            tool_input = parse_tool_input(call.arguments)
            parts.append(ToolUsePart(id=call.id, name=call.name, input=tool_input))
        # Some compatible servers say "stop" even when they called tools.
        stop: StopReason = "tool_use" if calls else _FINISH_REASONS.get(self.finish_reason, "other")
        message = Message(role="assistant", content=parts)
        out.append(MessageCompleted(message=message, stop_reason=stop, usage=self.usage))
        return out


def _starts_another(call: _Call, server_id: str, name: str) -> bool:
    """A delta belongs to a new call when it brings a different id, or a name after arguments."""
    if server_id and call.server_id and server_id != call.server_id:
        return True
    return bool(name) and name != call.name and bool(call.arguments)


def _usage(usage: Any) -> Usage | None:
    """The chunk's usage; None without a prompt count (zero is no report: a prompt is never
    empty, and the consumer estimates what is missing)."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", None) or 0)
    prompt = int(getattr(usage, "prompt_tokens", None) or 0)
    output = int(getattr(usage, "completion_tokens", None) or 0)
    if prompt <= 0:
        return None
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=output,
        cache_read_input_tokens=min(cached, prompt),
    )
