"""The rules the provider APIs enforce on a conversation: `normalize` makes a history obey them,
`validate_view` lists where a view breaks them (so a projection that would be rejected is never
sent)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from peri_cli.base.messages import (
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)


def _blank(part: Part) -> bool:
    """A text block with nothing but whitespace: the Anthropic API rejects it, so it never goes."""
    return isinstance(part, TextPart) and not part.text.strip()


def normalize(messages: list[Message]) -> list[Message]:
    """Make a history the APIs accept: user first, roles alternating, every tool_use answered,
    no blank text blocks.

    A user prompt committed before a failed turn leaves two user messages in a row; they merge.
    A tool_use whose results never landed (a torn write) is dropped, as is an orphan tool_result.
    A message left with nothing (say a reply that was only "\n\n") is dropped and its neighbours
    merge. Messages that need no change are passed through as the same objects.
    """
    paired: list[Message] = []
    for i, original in enumerate(messages):
        message = original
        keep: list[Part] | None = None
        if message.role == "assistant" and message.tool_uses:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = {r.tool_use_id for r in nxt.tool_results} if nxt else set()
            keep = [
                p for p in message.content if not isinstance(p, ToolUsePart) or p.id in answered
            ]
        elif message.role == "user" and message.tool_results:
            prev = paired[-1] if paired else None
            asked = {u.id for u in prev.tool_uses} if prev and prev.role == "assistant" else set()
            keep = [
                p
                for p in message.content
                if not isinstance(p, ToolResultPart) or p.tool_use_id in asked
            ]
        if any(_blank(p) for p in (keep if keep is not None else message.content)):
            keep = [p for p in (keep if keep is not None else message.content) if not _blank(p)]
        if keep is not None and len(keep) != len(message.content):
            message = Message.model_construct(role=message.role, content=keep)
        if not message.content:
            continue
        if paired and paired[-1].role == message.role:
            merged = [*paired[-1].content, *message.content]
            paired[-1] = Message.model_construct(role=message.role, content=merged)
        else:
            paired.append(message)
    while paired and paired[0].role != "user":
        paired.pop(0)
    return paired


def _signed(messages: Iterable[Message]) -> set[tuple[str, str, bool]]:
    return {
        (p.signature or "", p.thinking, p.redacted)
        for m in messages
        for p in m.content
        if isinstance(p, ThinkingPart) and (p.signature or p.redacted)
    }


def _check_part(role: str, part: Part, signed: set[tuple[str, str, bool]] | None) -> str | None:
    """What is wrong with one part, or None; the caller adds where it is (only when needed)."""
    if isinstance(part, TextPart):
        return None if part.text.strip() else "empty or whitespace-only text block"
    if isinstance(part, ToolUsePart):
        if role != "assistant":
            return f"tool_use in a {role} message"
        if not isinstance(part.input, dict) or not all(isinstance(k, str) for k in part.input):
            return f"tool_use {part.id} input is not a JSON object"
        return None
    if isinstance(part, ToolResultPart):
        return None if role == "user" else f"tool_result in a {role} message"
    if isinstance(part, ThinkingPart):
        if role != "assistant":
            return f"thinking in a {role} message"
        is_signed = bool(part.signature) or part.redacted
        key = (part.signature or "", part.thinking, part.redacted)
        if is_signed and signed is not None and key not in signed:
            return "signed thinking block differs from the one the provider sent"
        return None
    return None if role == "user" else f"image in a {role} message"


def validate_view(
    messages: Sequence[Message],
    *,
    originals: Sequence[Message] | None = None,
    only_parts_of: Collection[int] | None = None,
) -> list[str]:
    """Problems that would make a provider reject the view (empty list: valid).

    Checks: user first, roles alternating, no empty message or text block, every tool_use answered
    by a tool_result in the next message and no orphan results, unique tool_use ids, tool inputs
    that are JSON objects, parts in the role that may carry them, and, when `originals` are given,
    that every signed thinking block is byte-identical to one of theirs. `only_parts_of` limits
    the per-part checks to those message indexes (the structure is always checked in full).
    """
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append("messages[0]: the view must start with a user message")
    signed = _signed(originals) if originals is not None else None
    pending: list[str] = []
    seen: set[str] = set()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if i and message.role == messages[i - 1].role:
            problems.append(f"{where}: two {message.role} messages in a row")
        if not message.content:
            problems.append(f"{where}: empty message")
        if only_parts_of is None or i in only_parts_of:
            for j, part in enumerate(message.content):
                problem = _check_part(message.role, part, signed)
                if problem:
                    problems.append(f"{where}.content[{j}]: {problem}")
        results = [p.tool_use_id for p in message.content if isinstance(p, ToolResultPart)]
        if message.role == "user":
            orphans = [r for r in results if r not in pending]
            missing = [t for t in pending if t not in results]
            if orphans:
                problems.append(f"{where}: tool_result without a tool_use: {', '.join(orphans)}")
            if missing:
                problems.append(f"messages[{i - 1}]: tool_use not answered: {', '.join(missing)}")
            pending = []
        else:
            if pending:
                problems.append(f"messages[{i - 1}]: tool_use not answered: {', '.join(pending)}")
            pending = [p.id for p in message.content if isinstance(p, ToolUsePart)]
            dupes = [u for u in pending if u in seen]
            if dupes:
                problems.append(f"{where}: duplicate tool_use id: {', '.join(dupes)}")
            seen.update(pending)
    if pending:
        problems.append(
            f"messages[{len(messages) - 1}]: tool_use not answered: {', '.join(pending)}"
        )
    return problems
