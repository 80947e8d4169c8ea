"""A deterministic provider for tests and demos: replays scripted replies, records every request."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from peri_cli.base.messages import Message, Part, TextPart, ThinkingPart, ToolUsePart, Usage
from peri_cli.base.provider import (
    MessageCompleted,
    ModelRequest,
    ProviderError,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolUseStarted,
)
from peri_cli.providers.common import ModelListCache

DEFAULT_TEXT = "ok"


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call in a scripted reply; `id` defaults to a deterministic `toolu_scripted_N`."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class ScriptedReply:
    """One reply. `error` is raised instead of replying; `delay` is slept before each delta.

    Usage is `usage`, else a deterministic estimate; `report_usage=False` reports none at all
    (as a server that streams no usage chunk does).
    """

    text: str = ""
    thinking: str = ""
    signature: str | None = "scripted-signature"
    tool_calls: list[ScriptedCall] = field(default_factory=list)
    usage: Usage | None = None
    error: ProviderError | None = None
    delay: float = 0.0
    stop_reason: StopReason | None = None
    report_usage: bool = True


ReplySource = ScriptedReply | Callable[[ModelRequest], ScriptedReply]


def _words(text: str) -> list[str]:
    """Word-sized pieces that join back to `text` exactly."""
    return re.findall(r"\s*\S+\s*|\s+", text)


class ScriptedProvider:
    """Replays `replies` in order (a callable is called with the request); then says "ok".

    `models` is what `list_models` answers (None: a server with no list); like the real
    providers it asks once and caches, and `model_list_asks` counts the asks.
    """

    name = "scripted"

    def __init__(
        self, replies: list[ReplySource] | None = None, *, models: list[str] | None = None
    ) -> None:
        self.replies: list[ReplySource] = list(replies or [])
        self.requests: list[ModelRequest] = []
        self.models = None if models is None else list(models)
        self.model_list_asks = 0
        self._calls = 0
        self._model_list = ModelListCache()

    async def list_models(self) -> list[str] | None:
        return await self._model_list.get(self._fetch_models)

    async def _fetch_models(self) -> list[str] | None:
        self.model_list_asks += 1
        return None if self.models is None else list(self.models)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        source = self.replies.pop(0) if self.replies else ScriptedReply(text=DEFAULT_TEXT)
        reply = source if isinstance(source, ScriptedReply) else source(request)
        if reply.error is not None:
            raise reply.error
        parts: list[Part] = []
        if reply.thinking:
            for word in _words(reply.thinking):
                await asyncio.sleep(reply.delay)
                yield ThinkingDelta(word)
            parts.append(ThinkingPart(thinking=reply.thinking, signature=reply.signature))
        for word in _words(reply.text):
            await asyncio.sleep(reply.delay)
            yield TextDelta(word)
        if reply.text:
            parts.append(TextPart(text=reply.text))
        for call in reply.tool_calls:
            self._calls += 1
            call_id = call.id or f"toolu_scripted_{self._calls}"
            yield ToolUseStarted(id=call_id, name=call.name)
            parts.append(ToolUsePart(id=call_id, name=call.name, input=dict(call.input)))
        stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
        usage = (reply.usage or _estimate(request, reply)) if reply.report_usage else None
        yield MessageCompleted(
            message=Message(role="assistant", content=parts), stop_reason=stop, usage=usage
        )


def _estimate(request: ModelRequest, reply: ScriptedReply) -> Usage:
    """A deterministic stand-in for provider usage: about four characters per token."""
    chars = len(request.frozen_system) + len(request.dynamic_system)
    chars += sum(len(str(m.model_dump())) for m in request.messages)
    output = (
        len(reply.text) + len(reply.thinking) + sum(len(str(c.input)) for c in reply.tool_calls)
    )
    return Usage(input_tokens=max(1, chars // 4), output_tokens=max(1, output // 4))
