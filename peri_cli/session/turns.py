"""Which transcript entries a person typed: the turns that rewind, Micro and the summary count."""

from __future__ import annotations

from peri_cli.base.messages import TextPart
from peri_cli.session.transcript import MessageEntry


def origin_of(entry: MessageEntry) -> str | None:
    extra = entry.model_extra or {}
    origin = extra.get("origin")
    return origin if isinstance(origin, str) else None


def is_typed(entry: MessageEntry) -> bool:
    """A user message the person typed: no tool results, and no origin (an attachment, a `!`
    command's output or compaction's own message carries one)."""
    m = entry.message
    return m.role == "user" and not m.tool_results and origin_of(entry) is None


def is_human_turn(entry: MessageEntry) -> bool:
    """A user message with text from a person: it starts a user turn."""
    return is_typed(entry) and any(isinstance(p, TextPart) for p in entry.message.content)
