"""OpenAI Chat Completions and compatible servers (vLLM, llama.cpp, Ollama) behind the port.

One system message carries the frozen base and then the dynamic contributions, so the frozen bytes
are a byte-identical prefix of every request and the server's prefix cache can hit.
"""

from __future__ import annotations

import json
import os
import secrets
import string
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from peri_cli.base.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    Usage,
)
from peri_cli.base.provider import (
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
from peri_cli.providers import (
    MAX_MODELS,
    MODELS_TIMEOUT,
    ModelListCache,
    check_base_url,
    is_retryable_status,
    parse_retry_after,
    parse_tool_input,
    scrub_provider_text,
    with_aliases,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

DEFAULT_MODEL = "gpt-4.1"
PLACEHOLDER_KEY = (
    "not-needed"  # local servers need no key, but the SDK refuses to start without one
)
SYSTEM_SEPARATOR = "\n\n"
MAX_DETAIL = 500  # a proxy's HTML error page is not a message
ID_ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 9  # Mistral's servers accept only 9 alphanumerics; everyone else takes any string

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
        self._models = ModelListCache()

    def _get_client(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI, OpenAIError

            key = self._api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY
            check_base_url(self._base_url or os.environ.get("OPENAI_BASE_URL"), "OPENAI_BASE_URL")
            try:
                self._client = AsyncOpenAI(api_key=key, base_url=self._base_url, max_retries=0)
            except (OpenAIError, ValueError) as e:  # e.g. an OPENAI_BASE_URL httpx cannot parse
                raise ProviderError(self._scrub(f"cannot use the OpenAI API: {e}")) from e
        return self._client

    def _scrub(self, text: str) -> str:
        in_use = getattr(self._client, "api_key", None)
        keys = [self._api_key, in_use, os.environ.get("OPENAI_API_KEY")]
        return scrub_provider_text(text, keys, [self._base_url, os.environ.get("OPENAI_BASE_URL")])

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
        except (httpx2.HTTPError, httpx2.InvalidURL) as e:  # what the SDK does not wrap
            raise ProviderError(self._scrub(f"OpenAI API request failed: {e}")) from e
        try:
            async with chunks:
                async for chunk in chunks:
                    for out in turn.feed(chunk):
                        yield out
        # Once the reply is flowing, a dropped connection is an interrupted turn (the SDK wraps
        # it in APIConnectionError, or lets the transport error through).
        except (openai.APIConnectionError, httpx2.TransportError) as e:
            raise StreamInterrupted(f"the connection dropped mid-reply ({type(e).__name__})") from e
        except json.JSONDecodeError as e:  # a garbled `data:` line: the stream is as good as cut
            raise StreamInterrupted(MALFORMED + " (not valid JSON)") from e
        except openai.OpenAIError as e:
            raise self._map_error(e) from e
        for out in turn.finish():
            yield out

    async def list_models(self) -> list[str] | None:
        """The server's `GET /models` ids (Ollama's `name:latest` also as `name`); None without."""
        return await self._models.get(self._fetch_models)

    async def _fetch_models(self) -> list[str] | None:
        import httpx2
        import openai

        try:
            names: list[str] = []
            async for model in self._get_client().models.list(timeout=MODELS_TIMEOUT):
                if isinstance(getattr(model, "id", None), str) and model.id:
                    names.append(model.id)
                if len(names) >= MAX_MODELS:
                    break
        # No list, or none we can read: the server may still serve any name.
        except (ProviderError, openai.OpenAIError, httpx2.HTTPError, httpx2.InvalidURL):
            return None
        except (ValueError, TypeError, AttributeError):  # a list of the wrong shape
            return None
        return with_aliases(names, _model_aliases) if names else None

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


def _model_aliases(name: str) -> list[str]:
    """Ollama serves `llama3.2:latest` to a request for `llama3.2` too."""
    return [name.removesuffix(":latest")] if name.endswith(":latest") else []


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


MALFORMED = "the server sent a malformed stream event"


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


class _Turn:
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
