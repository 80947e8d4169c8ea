"""The stream worker's wire format: a model request one way, batches of stream events and
errors the other, as JSON-ready values (the worker and `procstream` both use it).

Strings cross as JSON with ASCII escapes, so every character (lone surrogates included) comes
back as it was sent."""

from __future__ import annotations

from typing import Any

from peri_cli.base.messages import Usage, dump_message, load_message
from peri_cli.base.provider import (
    MessageCompleted,
    ModelRequest,
    ProviderError,
    StreamEvent,
    StreamInterrupted,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
    ToolUseStarted,
)
from peri_cli.providers.batching import Item, StreamEnd, coalesce


def dump_request(request: ModelRequest) -> dict[str, Any]:
    return {
        "model": request.model,
        "frozen_system": request.frozen_system,
        "dynamic_system": request.dynamic_system,
        "messages": [dump_message(m) for m in request.messages],
        "tools": [[t.name, t.description, t.input_schema] for t in request.tools],
        "max_tokens": request.max_tokens,
        "cache_marks": list(request.cache_marks),
    }


def load_request(data: dict[str, Any]) -> ModelRequest:
    return ModelRequest(
        model=data["model"],
        frozen_system=data["frozen_system"],
        dynamic_system=data["dynamic_system"],
        messages=[load_message(m) for m in data["messages"]],
        tools=[ToolSpec(name, description, schema) for name, description, schema in data["tools"]],
        max_tokens=data["max_tokens"],
        cache_marks=tuple(data["cache_marks"]),
    )


def dump_error(error: BaseException) -> list[Any]:
    """A stream's failure; anything but a ProviderError (a bug in the worker) fails the call."""
    if isinstance(error, StreamInterrupted):
        return ["e", "interrupted", str(error), True, None, None]
    if isinstance(error, ProviderError):
        fields = [str(error), error.retryable, error.retry_after, error.status, error.too_long]
        return ["e", "provider", *fields]
    text = f"the stream worker failed: {type(error).__name__}: {error}"
    return ["e", "provider", text, False, None, None, False]


def dump_items(items: list[Item]) -> list[list[Any]]:
    """Items in order, consecutive deltas joined (`batching.coalesce`)."""
    out: list[list[Any]] = []
    for item in coalesce(items):
        match item:
            case TextDelta(text=text):
                out.append(["t", text])
            case ThinkingDelta(text=text):
                out.append(["k", text])
            case ToolUseStarted(id=call_id, name=name):
                out.append(["u", call_id, name])
            case MessageCompleted(message=message, stop_reason=stop, usage=usage):
                used = None if usage is None else usage.model_dump()
                out.append(["m", dump_message(message), stop, used])
            case StreamEnd(error=None):
                out.append(["end"])
            case StreamEnd(error=error):
                assert error is not None
                out.append(dump_error(error))
    return out


def load_item(data: list[Any]) -> StreamEvent | StreamEnd:
    kind = data[0]
    if kind == "t":
        return TextDelta(data[1])
    if kind == "k":
        return ThinkingDelta(data[1])
    if kind == "u":
        return ToolUseStarted(id=data[1], name=data[2])
    if kind == "m":
        usage = None if data[3] is None else Usage(**data[3])
        return MessageCompleted(load_message(data[1]), data[2], usage)
    if kind == "end":
        return StreamEnd()
    return StreamEnd(load_error(data))


def load_error(data: list[Any]) -> ProviderError:
    if data[1] == "interrupted":
        return StreamInterrupted(data[2])
    _, _, message, retryable, retry_after, status, too_long = data
    return ProviderError(
        message, retryable=retryable, retry_after=retry_after, status=status, too_long=too_long
    )
