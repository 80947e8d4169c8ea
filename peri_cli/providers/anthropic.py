"""The Anthropic Messages API behind the Provider port, on the official `anthropic` SDK.

Cache layout: `system` is [frozen base + breakpoint, dynamic contributions], and the last block of
the most recent message carries the second breakpoint — two of the four the API allows.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
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
    from anthropic import AsyncAnthropic

DEFAULT_MODEL = "claude-sonnet-4-5"
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
MAX_DETAIL = 500  # a proxy's HTML error page is not a message
MALFORMED = "the server sent a malformed stream event"
_DATED = re.compile(r"^(?P<stem>.+)-(?P<date>\d{8})$")
_LONE_MAJOR = re.compile(r"[A-Za-z]-\d+$")  # claude-sonnet-4 (alias claude-sonnet-4-0)

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "model_context_window_exceeded": "max_tokens",
}
# In-stream `error` events arrive on a 200 response; their type tells the status it stands for.
_STREAM_ERROR_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}


class AnthropicProvider:
    """Streams Messages API replies; Peri retries itself, so the SDK's own retries are off."""

    name = "anthropic"

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
        self._client: AsyncAnthropic | None = None
        self._models = ModelListCache()

    def _get_client(self) -> AsyncAnthropic:
        if self._client is None:
            from anthropic import AnthropicError, AsyncAnthropic

            url = self._base_url or os.environ.get("ANTHROPIC_BASE_URL")
            check_base_url(url, "ANTHROPIC_BASE_URL")
            try:
                self._client = AsyncAnthropic(
                    api_key=self._api_key, base_url=self._base_url, max_retries=0
                )
            except AnthropicError as e:  # no key, and the SDK's profile lookup failed too
                raise _no_credentials() from e
        return self._client

    def _scrub(self, text: str) -> str:
        in_use = getattr(self._client, "api_key", None)
        keys = [self._api_key, in_use, os.environ.get("ANTHROPIC_API_KEY")]
        urls = [self._base_url, os.environ.get("ANTHROPIC_BASE_URL")]
        return scrub_provider_text(text, keys, urls)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield deltas as they arrive and end with MessageCompleted, or raise ProviderError."""
        import anthropic
        import httpx2

        client = self._get_client()
        params = build_params(request, self.default_model)
        turn = _Turn()
        try:
            events = await client.messages.create(**params, stream=True)
        except TypeError as e:  # how the SDK says it found no credentials at all
            if "authentication" not in str(e):
                raise
            raise _no_credentials() from e
        except anthropic.AnthropicError as e:
            raise self._map_error(e) from e
        except (httpx2.HTTPError, httpx2.InvalidURL) as e:  # what the SDK does not wrap
            raise ProviderError(self._scrub(f"Anthropic API request failed: {e}")) from e
        try:
            async with events:
                async for event in events:
                    for out in turn.feed(event):
                        yield out
        # Once the reply is flowing, a dropped connection is an interrupted turn (the SDK lets the
        # transport error through; wrapped as APIConnectionError it means the same).
        except (anthropic.APIConnectionError, httpx2.TransportError) as e:
            raise StreamInterrupted(f"the connection dropped mid-reply ({type(e).__name__})") from e
        except json.JSONDecodeError as e:  # a garbled `data:` line: the stream is as good as cut
            raise StreamInterrupted(MALFORMED + " (not valid JSON)") from e
        except anthropic.AnthropicError as e:
            raise self._map_error(e) from e
        yield turn.finish()

    async def list_models(self) -> list[str] | None:
        """The API's model ids, with the aliases dated ids imply; None without a list."""
        return await self._models.get(self._fetch_models)

    async def _fetch_models(self) -> list[str] | None:
        import anthropic
        import httpx2

        try:
            names: list[str] = []
            pages = self._get_client().models.list(limit=1000, timeout=MODELS_TIMEOUT)
            async for model in pages:
                if isinstance(getattr(model, "id", None), str) and model.id:
                    names.append(model.id)
                if len(names) >= MAX_MODELS:
                    break
        # No list, or none we can read: the server may still serve any name.
        except (ProviderError, anthropic.AnthropicError, httpx2.HTTPError, httpx2.InvalidURL):
            return None
        except (ValueError, TypeError, AttributeError):  # a list of the wrong shape
            return None
        return with_aliases(names, model_aliases) if names else None

    def _map_error(self, e: Exception) -> ProviderError:
        import anthropic

        if isinstance(e, anthropic.APITimeoutError):
            return ProviderError("Anthropic API request timed out", retryable=True)
        if isinstance(e, anthropic.APIConnectionError):
            return ProviderError(
                f"could not reach the Anthropic API at {self._base_url_text()}", retryable=True
            )
        if isinstance(e, anthropic.APIStatusError):
            kind = str(e.type or "")  # `error.type` / `error.message` of the body, when present
            detail = (e.api_message or e.message)[:MAX_DETAIL]
            status = e.status_code
            if status == 200:  # an `error` event inside the stream
                status = _STREAM_ERROR_STATUS.get(kind, 400)
            if status == 401:
                message = (
                    "Anthropic rejected the API key (401 authentication_error): "
                    "check ANTHROPIC_API_KEY"
                )
            else:
                message = f"Anthropic API error {status} {kind or 'error'}: {detail}"
            return ProviderError(
                self._scrub(message),
                retryable=is_retryable_status(status),
                retry_after=parse_retry_after(e.response.headers),
                status=status,
            )
        return ProviderError(self._scrub(f"Anthropic API error: {e}"))

    def _base_url_text(self) -> str:
        return self._scrub(str(self._client.base_url if self._client else self._base_url))


def model_aliases(name: str) -> list[str]:
    """The aliases the API takes for a dated id: `claude-sonnet-4-5-20250929` answers to
    `claude-sonnet-4-5` and `-latest`; `claude-sonnet-4-20250514` to `claude-sonnet-4-0` too."""
    dated = _DATED.match(name)
    if not dated:
        return []
    stem = dated["stem"]
    aliases = [stem, f"{stem}-latest"]
    if _LONE_MAJOR.search(stem):
        aliases.append(f"{stem}-0")
    return aliases


def _no_credentials() -> ProviderError:
    return ProviderError("no Anthropic credentials: set ANTHROPIC_API_KEY")


# --- request --------------------------------------------------------------------------------------


def build_params(request: ModelRequest, default_model: str = DEFAULT_MODEL) -> dict[str, Any]:
    """The Messages API body for `request` (without `stream`)."""
    params: dict[str, Any] = {
        "model": request.model or default_model,
        "max_tokens": request.max_tokens,
        "messages": convert_messages(request.messages, request.cache_marks),
    }
    system = build_system(request.frozen_system, request.dynamic_system)
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = [convert_tool(t) for t in request.tools]
    return params


def build_system(frozen: str, dynamic: str) -> list[dict[str, Any]]:
    """The frozen base as one cached block, then the dynamic contributions in their own block."""
    blocks: list[dict[str, Any]] = []
    if frozen:
        blocks.append({"type": "text", "text": frozen, "cache_control": dict(EPHEMERAL)})
    if dynamic:
        blocks.append({"type": "text", "text": dynamic})
    return blocks


def convert_tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def convert_messages(messages: list[Message], marks: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """Core messages as API messages, with a breakpoint on the most recent message's last block,
    and on the messages `marks` names (at most two: the system prompt holds one breakpoint).

    Parts the API cannot take back (empty text, unsigned thinking) are dropped; a message left
    empty is skipped and same-role neighbours are merged so the roles still alternate.
    """
    out: list[dict[str, Any]] = []
    marked: set[int] = set()  # indexes into `out`
    wanted = set(marks[-(MAX_BREAKPOINTS - 2) :]) if marks else set()
    for i, message in enumerate(messages):
        blocks = [b for b in (convert_part(p) for p in message.content) if b is not None]
        if blocks:
            if out and out[-1]["role"] == message.role:
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": message.role, "content": blocks})
        if i in wanted and out:
            marked.add(len(out) - 1)
    if out:
        marked.add(len(out) - 1)
    for index in sorted(marked):
        # Thinking blocks cannot carry cache_control; mark the last block that can.
        for block in reversed(out[index]["content"]):
            if block["type"] not in ("thinking", "redacted_thinking"):
                block["cache_control"] = dict(EPHEMERAL)
                break
    return out


def convert_part(part: Part) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, ImagePart):
        return _image(part)
    if isinstance(part, ToolUsePart):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.input}
    if isinstance(part, ToolResultPart):
        content = [
            {"type": "text", "text": c.text} if isinstance(c, TextPart) else _image(c)
            for c in part.content
            if not (isinstance(c, TextPart) and not c.text)
        ]
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.tool_use_id}
        if content:
            block["content"] = content
        if part.is_error:
            block["is_error"] = True
        return block
    if isinstance(part, ThinkingPart):
        if part.redacted:
            data = part.signature or part.thinking
            return {"type": "redacted_thinking", "data": data} if data else None
        if not part.signature:
            return None  # unsigned thinking cannot be sent back
        return {"type": "thinking", "thinking": part.thinking, "signature": part.signature}
    return None


def _image(part: ImagePart) -> dict[str, Any]:
    source = {"type": "base64", "media_type": part.media_type, "data": part.data}
    return {"type": "image", "source": source}


def count_breakpoints(params: dict[str, Any]) -> int:
    """How many cache_control markers a request body carries (the API allows MAX_BREAKPOINTS)."""

    def count(value: Any) -> int:
        if isinstance(value, dict):
            own = 1 if value.get("cache_control") else 0
            return own + sum(count(v) for k, v in value.items() if k != "cache_control")
        if isinstance(value, list):
            return sum(count(v) for v in value)
        return 0

    return count([params.get("system"), params.get("messages"), params.get("tools")])


# --- response -------------------------------------------------------------------------------------


@dataclass
class _Block:
    kind: str  # text | thinking | redacted_thinking | tool_use
    text: str = ""
    signature: str = ""
    tool_id: str = ""
    tool_name: str = ""
    json: list[str] = field(default_factory=list)

    def part(self) -> Part | None:
        if self.kind == "text":
            return TextPart(text=self.text) if self.text else None
        if self.kind == "thinking":
            return ThinkingPart(thinking=self.text, signature=self.signature or None)
        if self.kind == "redacted_thinking":
            return ThinkingPart(thinking="", signature=self.signature, redacted=True)
        if self.kind == "tool_use":
            tool_input = parse_tool_input("".join(self.json))
            return ToolUsePart(id=self.tool_id, name=self.tool_name, input=tool_input)
        return None


class _Turn:
    """Accumulates one streamed reply from raw SDK events."""

    def __init__(self) -> None:
        self.blocks: dict[int, _Block] = {}
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None
        self.stopped = False

    def _add_usage(self, usage: Any) -> None:
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, key, None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                self.usage[key] = max(0, int(value))

    def feed(self, event: Any) -> list[StreamEvent]:
        try:
            return self._feed(event)
        except (AttributeError, TypeError, ValueError) as e:  # valid JSON of the wrong shape
            raise StreamInterrupted(f"{MALFORMED} ({type(e).__name__})") from e

    def _feed(self, event: Any) -> list[StreamEvent]:
        kind = event.type
        if kind == "message_start":
            self._add_usage(getattr(event.message, "usage", None))
        elif kind == "content_block_start":
            return self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            block = self.blocks.get(event.index)
            delta = event.delta
            if block is None:
                return []
            if delta.type == "text_delta":
                block.text += delta.text
                return [TextDelta(delta.text)]
            if delta.type == "thinking_delta":
                block.text += delta.thinking
                return [ThinkingDelta(delta.thinking)]
            if delta.type == "signature_delta":
                block.signature += delta.signature
            elif delta.type == "input_json_delta":
                block.json.append(delta.partial_json)
        elif kind == "message_delta":
            if event.delta.stop_reason:
                self.stop_reason = event.delta.stop_reason
            self._add_usage(getattr(event, "usage", None))
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _start(self, index: int, cb: Any) -> list[StreamEvent]:
        if cb.type == "text":
            self.blocks[index] = _Block("text", text=cb.text or "")
            return [TextDelta(cb.text)] if cb.text else []
        if cb.type == "thinking":
            self.blocks[index] = _Block("thinking", text=cb.thinking, signature=cb.signature or "")
            return [ThinkingDelta(cb.thinking)] if cb.thinking else []
        if cb.type == "redacted_thinking":
            self.blocks[index] = _Block("redacted_thinking", signature=cb.data)
        elif cb.type == "tool_use":
            self.blocks[index] = _Block("tool_use", tool_id=cb.id, tool_name=cb.name)
            return [ToolUseStarted(id=cb.id, name=cb.name)]
        # server-side tool blocks and other kinds Peri does not use are ignored
        return []

    def finish(self) -> MessageCompleted:
        if not self.stopped or self.stop_reason is None:
            raise StreamInterrupted()
        parts = [p for _, b in sorted(self.blocks.items()) if (p := b.part()) is not None]
        # Without the prompt side the figure is no report at all: the consumer estimates it.
        prompt_reported = self.usage.keys() - {"output_tokens"}
        return MessageCompleted(
            message=Message(role="assistant", content=parts),
            stop_reason=_STOP_REASONS.get(self.stop_reason, "other"),
            usage=Usage(**self.usage) if prompt_reported else None,
        )
