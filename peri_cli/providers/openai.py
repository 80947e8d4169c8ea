"""OpenAI Chat Completions and compatible servers (vLLM, llama.cpp, Ollama) behind the port.

One system message carries the frozen base and then the dynamic contributions, so the frozen bytes
are a byte-identical prefix of every request and the server's prefix cache can hit.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from peri_cli.core.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    Usage,
)
from peri_cli.core.provider import (
    MessageCompleted,
    ModelRequest,
    ProviderError,
    StopReason,
    StreamEvent,
    StreamInterrupted,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
    ToolUseStarted,
)
from peri_cli.providers import is_retryable_status, parse_retry_after, parse_tool_input, scrub

if TYPE_CHECKING:
    from openai import AsyncOpenAI

DEFAULT_MODEL = "gpt-4.1"
PLACEHOLDER_KEY = (
    "not-needed"  # local servers need no key, but the SDK refuses to start without one
)
SYSTEM_SEPARATOR = "\n\n"
MAX_DETAIL = 500  # a proxy's HTML error page is not a message

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIProvider:
    """Streams Chat Completions; Peri retries itself, so the SDK's own retries are off."""

    name = "openai"

    def __init__(
        self,
        default_model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        self.default_model = default_model or DEFAULT_MODEL
        self._api_key = api_key
        self._base_url = base_url
        self._client: AsyncOpenAI | None = None

    def _get_client(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI

            key = self._api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY
            self._client = AsyncOpenAI(api_key=key, base_url=self._base_url, max_retries=0)
        return self._client

    def _scrub(self, text: str) -> str:
        in_use = getattr(self._client, "api_key", None)
        return scrub(text, [self._api_key, in_use, os.environ.get("OPENAI_API_KEY")])

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield deltas as they arrive and end with MessageCompleted, or raise ProviderError."""
        import httpx2
        import openai

        client = self._get_client()
        params = build_params(request, self.default_model, official=_is_official(client))
        turn = _Turn()
        try:
            chunks = await client.chat.completions.create(
                **params, stream=True, stream_options={"include_usage": True}
            )
        except openai.OpenAIError as e:
            raise self._map_error(e) from e
        try:
            async with chunks:
                async for chunk in chunks:
                    for out in turn.feed(chunk):
                        yield out
        # Once the reply is flowing, a dropped connection is an interrupted turn (the SDK wraps
        # it in APIConnectionError, or lets the transport error through).
        except (openai.APIConnectionError, httpx2.TransportError) as e:
            raise StreamInterrupted(f"the connection dropped mid-reply ({type(e).__name__})") from e
        except openai.OpenAIError as e:
            raise self._map_error(e) from e
        yield turn.finish()

    def _map_error(self, e: Exception) -> ProviderError:
        import openai

        if isinstance(e, openai.APITimeoutError):
            return ProviderError("OpenAI API request timed out", retryable=True)
        if isinstance(e, openai.APIConnectionError):
            where = self._scrub(str(self._client.base_url if self._client else self._base_url))
            return ProviderError(f"could not reach the OpenAI API at {where}", retryable=True)
        if isinstance(e, openai.APIStatusError):
            status = e.status_code
            detail = (_error_detail(e.body) or e.message)[:MAX_DETAIL]
            if status == 401:
                message = "the server rejected the API key (401): check OPENAI_API_KEY"
            else:
                message = f"OpenAI API error {status}: {detail}"
            return ProviderError(
                self._scrub(message),
                retryable=is_retryable_status(status),
                retry_after=parse_retry_after(e.response.headers),
                status=status,
            )
        if isinstance(e, openai.APIError):  # an error object inside the stream
            body = e.body if isinstance(e.body, dict) else {}
            invalid = body.get("type") == "invalid_request_error"
            return ProviderError(
                self._scrub(f"OpenAI API error in the stream: {e.message}"), retryable=not invalid
            )
        return ProviderError(self._scrub(f"OpenAI API error: {e}"))


def _error_detail(body: object) -> str | None:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return None


def _is_official(client: AsyncOpenAI) -> bool:
    return client.base_url.host == "api.openai.com"


# --- request --------------------------------------------------------------------------------------


def build_params(
    request: ModelRequest, default_model: str = DEFAULT_MODEL, *, official: bool = False
) -> dict[str, Any]:
    """The Chat Completions body for `request` (without the stream options).

    OpenAI's own API wants `max_completion_tokens` (its reasoning models refuse `max_tokens`);
    compatible servers know `max_tokens` best.
    """
    messages: list[dict[str, Any]] = []
    system = system_text(request.frozen_system, request.dynamic_system)
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend(convert_messages(request.messages))
    params: dict[str, Any] = {"model": request.model or default_model, "messages": messages}
    params["max_completion_tokens" if official else "max_tokens"] = request.max_tokens
    if request.tools:
        params["tools"] = [convert_tool(t) for t in request.tools]
    return params


def system_text(frozen: str, dynamic: str) -> str:
    """Frozen bytes first and unchanged, then the dynamic contributions."""
    if frozen and dynamic:
        return frozen + SYSTEM_SEPARATOR + dynamic
    return frozen or dynamic


def convert_tool(tool: ToolSpec) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}
    return {"type": "function", "function": function}


def convert_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "assistant":
            converted = _assistant(message)
            if converted:
                out.append(converted)
        else:
            out.extend(_user(message))
    return out


def _assistant(message: Message) -> dict[str, Any] | None:
    """Text and tool calls; thinking is dropped (Chat Completions takes no reasoning back)."""
    text = "".join(p.text for p in message.content if isinstance(p, TextPart))
    calls = [
        {
            "id": p.id,
            "type": "function",
            "function": {"name": p.name, "arguments": json.dumps(p.input, ensure_ascii=False)},
        }
        for p in message.content
        if isinstance(p, ToolUsePart)
    ]
    if not text and not calls:
        return None
    converted: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        converted["tool_calls"] = calls
    return converted


def _user(message: Message) -> list[dict[str, Any]]:
    """Tool results become `tool` messages first; images they held follow in one user message."""
    out: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ToolResultPart):
            images = [c for c in part.content if isinstance(c, ImagePart)]
            text = part.text
            if part.is_error:
                text = f"Error: {text}"
            if images:
                note = f"[{len(images)} image(s) attached in the next user message]"
                text = f"{text}\n{note}" if text else note
                content.append(
                    {"type": "text", "text": f"Images from tool result {part.tool_use_id}:"}
                )
                content.extend(_image(i) for i in images)
            out.append({"role": "tool", "tool_call_id": part.tool_use_id, "content": text})
        elif isinstance(part, TextPart) and part.text:
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append(_image(part))
    if content:
        if all(c["type"] == "text" for c in content):
            out.append({"role": "user", "content": "\n\n".join(c["text"] for c in content)})
        else:
            out.append({"role": "user", "content": content})
    return out


def _image(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{part.media_type};base64,{part.data}"}}


# --- response -------------------------------------------------------------------------------------


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""
    announced: bool = False


class _Turn:
    """Accumulates one streamed reply from Chat Completions chunks."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()

    def feed(self, chunk: Any) -> list[StreamEvent]:
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        out: list[StreamEvent] = []
        for choice in chunk.choices[:1]:
            delta = choice.delta
            # Compatible servers stream reasoning as an extra field (vLLM, DeepSeek, llama.cpp).
            reasoning = getattr(delta, "reasoning_content", None) or getattr(
                delta, "reasoning", None
            )
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
                out.append(ThinkingDelta(reasoning))
            if delta.content:
                self.text.append(delta.content)
                out.append(TextDelta(delta.content))
            for tc in delta.tool_calls or []:
                out.extend(self._tool_call_delta(tc))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return out

    def _tool_call_delta(self, tc: Any) -> list[StreamEvent]:
        call = self.calls.setdefault(tc.index, _Call())
        if tc.id and not call.id:
            call.id = tc.id
        if tc.function is not None:
            if tc.function.name and not call.name:
                call.name = tc.function.name
            if tc.function.arguments:
                call.arguments += tc.function.arguments
        if call.name and not call.announced:
            call.announced = True
            call.id = call.id or f"call_{uuid.uuid4().hex[:24]}"  # some servers send none
            return [ToolUseStarted(id=call.id, name=call.name)]
        return []

    def finish(self) -> MessageCompleted:
        if self.finish_reason is None:
            raise StreamInterrupted()
        parts: list[Part] = []
        if self.reasoning:
            parts.append(ThinkingPart(thinking="".join(self.reasoning)))
        if self.text:
            parts.append(TextPart(text="".join(self.text)))
        calls = [c for _, c in sorted(self.calls.items()) if c.name]
        for call in calls:
            tool_input = parse_tool_input(call.arguments)
            parts.append(ToolUsePart(id=call.id, name=call.name, input=tool_input))
        # Some compatible servers say "stop" even when they called tools.
        stop: StopReason = "tool_use" if calls else _FINISH_REASONS.get(self.finish_reason, "other")
        return MessageCompleted(
            message=Message(role="assistant", content=parts), stop_reason=stop, usage=self.usage
        )


def _usage(usage: Any) -> Usage:
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", None) or 0)
    prompt = int(usage.prompt_tokens or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(usage.completion_tokens or 0),
        cache_read_input_tokens=cached,
    )
