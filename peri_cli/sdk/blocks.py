"""The Claude Agent SDK's content blocks, beside Peri's events: `AssistantEvent.content` holds
`TextBlock`, `ThinkingBlock` and `ToolUseBlock`; `ToolResultEvent.block` is a `ToolResultBlock`.
They are views of the event's own fields: the `stream-json` lines do not change."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True)


class TextBlock(_Block):
    text: str


class ThinkingBlock(_Block):
    thinking: str
    signature: str = ""


class ToolUseBlock(_Block):
    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(_Block):
    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock


def blocks_of(parts: list[dict[str, Any]]) -> list[ContentBlock]:
    """A message's parts (as `dump_message` writes them) as content blocks; images and redacted
    thinking are left out."""
    out: list[ContentBlock] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            out.append(TextBlock(text=part.get("text", "")))
        elif kind == "thinking" and not part.get("redacted"):
            out.append(
                ThinkingBlock(
                    thinking=part.get("thinking", ""), signature=part.get("signature") or ""
                )
            )
        elif kind == "tool_use":
            out.append(ToolUseBlock(id=part["id"], name=part["name"], input=dict(part["input"])))
        elif kind == "tool_result":
            text = "".join(
                p.get("text", "") for p in part.get("content", []) if p.get("type") == "text"
            )
            out.append(
                ToolResultBlock(
                    tool_use_id=part["tool_use_id"], content=text, is_error=part.get("is_error")
                )
            )
    return out
