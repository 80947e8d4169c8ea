"""The pure Micro planner: directives that shorten old turns of the view, never the record."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from peri_cli.core.messages import ImagePart, TextPart, ThinkingPart, ToolResultPart, ToolUsePart
from peri_cli.core.projection import (
    Directive,
    DropThinking,
    ElideInput,
    ReplaceImage,
    TruncateResult,
    cut_middle,
)
from peri_cli.core.tokens import estimate_tokens
from peri_cli.core.transcript import MessageEntry

MIN_CUT_CHARS = 400  # a cut must remove at least this much to be worth a directive
MIN_SAVING_TOKENS = 16

# Tools whose input is file content: elide it with a note that says so, keep the path.
FILE_CHANGING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Input keys that identify what a call was about; kept whole however long they are.
KEEP_INPUT_KEYS = frozenset(
    {
        "file_path",
        "path",
        "notebook_path",
        "pattern",
        "name",
        "description",
        "subagent_type",
        "tool_name",
        "glob",
        "url",
        "offset",
        "limit",
    }
)

ORIGIN_SUMMARY = "compact_summary"
ORIGIN_REINJECT = "compact_reinject"


def _origin(entry: MessageEntry) -> str | None:
    extra = entry.model_extra or {}
    origin = extra.get("origin")
    return origin if isinstance(origin, str) else None


def is_human_turn(entry: MessageEntry) -> bool:
    """A user message with text from a person: not tool results, not a compaction's own message."""
    m = entry.message
    return (
        m.role == "user"
        and any(isinstance(p, TextPart) for p in m.content)
        and not m.tool_results
        and _origin(entry) not in (ORIGIN_SUMMARY, ORIGIN_REINJECT)
    )


def protected_start(view_entries: Sequence[MessageEntry], keep_turns: int) -> int:
    """Index of the first entry of the last `keep_turns` user turns (len when keep_turns is 0)."""
    if keep_turns <= 0:
        return len(view_entries)
    seen = 0
    for i in range(len(view_entries) - 1, -1, -1):
        if is_human_turn(view_entries[i]):
            seen += 1
            if seen == keep_turns:
                return i
    return 0  # fewer turns than that: everything is protected


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def elide_note(tool: str, key: str, value: object, file_path: object) -> str:
    size = len(value) if isinstance(value, str) else len(_json(value))
    note = f"[{size:,} characters elided from this old tool call by context compaction"
    if tool in FILE_CHANGING_TOOLS:
        where = f" {file_path}" if isinstance(file_path, str) else " the file"
        return (
            f"{note}; the tool received the full text. This note is not file content: "
            f"Read{where} to see what it holds now.]"
        )
    return note + "]"


def _plan_input(
    message_id: str, use: ToolUsePart, keep_chars: int
) -> tuple[ElideInput | None, dict[str, Any]]:
    fields: dict[str, str] = {}
    cut = 0
    for key, value in use.input.items():
        if key in KEEP_INPUT_KEYS and isinstance(value, str | int | float | bool):
            continue
        size = len(value) if isinstance(value, str) else len(_json(value))
        if isinstance(value, str | dict | list) and size > keep_chars:
            note = elide_note(use.name, key, value, use.input.get("file_path"))
            if len(note) < size:
                fields[key] = note
                cut += size - len(note)
    if cut < MIN_CUT_CHARS:
        return None, use.input
    new = {k: fields.get(k, v) for k, v in use.input.items()}
    return ElideInput(message_id=message_id, tool_use_id=use.id, fields=fields), new


def _image_placeholder(image: ImagePart) -> str:
    kb = len(image.data) * 3 // 4 // 1024
    return f"[image omitted by context compaction: {image.media_type}, about {kb:,} KB]"


def _candidates(
    entry: MessageEntry, keep_chars: int, count: Callable[[str], int]
) -> list[tuple[Directive, int]]:
    """Every directive worth making for one message, with its estimated saving in tokens."""
    out: list[tuple[Directive, int]] = []
    mid = entry.id
    for i, part in enumerate(entry.message.content):
        if isinstance(part, ThinkingPart):
            saving = count(part.thinking) + 4
            out.append((DropThinking(message_id=mid, index=i), saving))
        elif isinstance(part, ImagePart):
            placeholder = _image_placeholder(part)
            saving = 1000 - count(placeholder)  # images cost ~1,000+ tokens; not worth decoding
            out.append((ReplaceImage(message_id=mid, index=i, placeholder=placeholder), saving))
        elif isinstance(part, ToolUsePart):
            directive, new = _plan_input(mid, part, keep_chars)
            if directive is not None:
                out.append((directive, count(_json(part.input)) - count(_json(new))))
        elif isinstance(part, ToolResultPart):
            text = part.text
            if len(text) > 2 * keep_chars + MIN_CUT_CHARS:
                d = TruncateResult(
                    message_id=mid, tool_use_id=part.tool_use_id, head=keep_chars, tail=keep_chars
                )
                out.append((d, count(text) - count(cut_middle(text, keep_chars, keep_chars))))
            for j, item in enumerate(part.content):
                if isinstance(item, ImagePart):
                    placeholder = _image_placeholder(item)
                    d2 = ReplaceImage(
                        message_id=mid,
                        index=j,
                        tool_use_id=part.tool_use_id,
                        placeholder=placeholder,
                    )
                    out.append((d2, 1000 - count(placeholder)))
    return out


def plan_micro(
    view_entries: Sequence[MessageEntry],
    need_to_free: int,
    *,
    keep_turns: int = 3,
    keep_chars: int = 200,
    already: Collection[str] = (),
    count: Callable[[str], int] = estimate_tokens,
) -> list[Directive]:
    """Pure: directives that free about `need_to_free` tokens from turns older than the last
    `keep_turns` user turns, oldest first.

    Long tool results keep `keep_chars` of head and tail around a marker; large tool inputs keep
    their keys and small fields, with notes for the big values (file-changing tools say the
    content was elided, never passing a note off as file content); images become placeholders;
    reasoning blocks are dropped whole. Parts are never removed from a tool_use/tool_result pair,
    so pairing always holds. `already` holds the keys of directives in force, which are skipped.
    """
    if need_to_free <= 0:
        return []
    stop = protected_start(view_entries, keep_turns)
    planned: list[Directive] = []
    freed = 0
    for entry in view_entries[:stop]:
        for directive, saving in _candidates(entry, keep_chars, count):
            if directive.key in already or saving < MIN_SAVING_TOKENS:
                continue
            planned.append(directive)
            freed += saving
            if freed >= need_to_free:
                return planned
    return planned
