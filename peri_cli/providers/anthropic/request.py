"""The Messages API body for a request, and its cache layout: `system` is [frozen base +
breakpoint, dynamic contributions], and the last block of the most recent message carries the
second breakpoint — two of the four the API allows.
"""

from __future__ import annotations

from typing import Any

from peri_cli.base.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
from peri_cli.base.provider import ModelRequest, ToolSpec

DEFAULT_MODEL = "claude-sonnet-4-5"
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4


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
