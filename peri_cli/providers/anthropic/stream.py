"""One streamed Messages API reply: the SDK's raw events become Peri's stream events as they
arrive, and the assistant message with its stop reason and usage at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
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

MALFORMED = "the server sent a malformed stream event"

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "model_context_window_exceeded": "max_tokens",
}


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


class StreamedReply:
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
