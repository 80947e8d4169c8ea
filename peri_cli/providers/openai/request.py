"""The Chat Completions body for a request: one system message carrying the frozen base and then
the dynamic contributions, so the frozen bytes are a byte-identical prefix of every request."""

from __future__ import annotations

import json
from typing import Any

from peri_cli.base.messages import ImagePart, Message, TextPart, ToolResultPart, ToolUsePart
from peri_cli.base.provider import ModelRequest, ToolSpec

DEFAULT_MODEL = "gpt-4.1"
SYSTEM_SEPARATOR = "\n\n"


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
