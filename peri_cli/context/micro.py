"""The pure Micro planner: directives that shorten older parts of the view, never the record.

What may be shortened is decided by protection measured in tokens, not turns: the newest K tool
results are always whole; the last few user turns are protected only up to a token budget, newest
parts first, so inside one long agentic turn the older results are projected like any others.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from peri_cli.base.messages import ImagePart, TextPart, ThinkingPart, ToolResultPart, ToolUsePart
from peri_cli.context.directives import (
    ATTACHED,
    ATTACHED_AGAIN,
    Directive,
    DropThinking,
    ElideInput,
    NoteResult,
    ReplaceImage,
    TruncateResult,
    TruncateText,
)
from peri_cli.context.estimate import IMAGE_TOKENS_MAX, estimate_tokens
from peri_cli.context.notes import NoteCandidate, plan_notes, result_note
from peri_cli.context.textcut import cut_middle
from peri_cli.session.transcript import MessageEntry
from peri_cli.session.turns import is_human_turn, origin_of

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
ORIGIN_WORKING_STATE = "compact_working_state"  # context/workstate.py
# Compaction's own messages: never a user turn, never projected by Micro.
COMPACTION_ORIGINS = frozenset({ORIGIN_SUMMARY, ORIGIN_REINJECT, ORIGIN_WORKING_STATE})

DEFAULT_KEEP_RESULTS = 3
DEFAULT_KEEP_TURNS = 3


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
    return 0  # fewer turns than that: all of them are in the protected turns


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


def elided_input(use: ToolUsePart, keep_chars: int) -> tuple[dict[str, str], dict[str, Any]]:
    """The notes that would replace `use`'s large values, and the input with them in place.

    Identifying keys (path, pattern, ...) are kept whatever their size; the input stays a JSON
    object with the same keys."""
    fields: dict[str, str] = {}
    for key, value in use.input.items():
        if key in KEEP_INPUT_KEYS and isinstance(value, str | int | float | bool):
            continue
        size = len(value) if isinstance(value, str) else len(_json(value))
        if isinstance(value, str | dict | list) and size > keep_chars:
            note = elide_note(use.name, key, value, use.input.get("file_path"))
            if len(note) < size:
                fields[key] = note
    return fields, {k: fields.get(k, v) for k, v in use.input.items()}


def _plan_input(
    message_id: str, use: ToolUsePart, keep_chars: int
) -> tuple[ElideInput | None, dict[str, Any]]:
    fields, new = elided_input(use, keep_chars)
    cut = sum(
        (len(v) if isinstance(v, str) else len(_json(v))) - len(fields[k])
        for k, v in use.input.items()
        if k in fields
    )
    if cut < MIN_CUT_CHARS:
        return None, use.input
    return ElideInput(message_id=message_id, tool_use_id=use.id, fields=fields), new


def _image_placeholder(image: ImagePart) -> str:
    kb = len(image.data) * 3 // 4 // 1024
    return f"[image omitted by context compaction: {image.media_type}, about {kb:,} KB]"


# --- units: what is protected or projected together ---------------------------------------------


@dataclass
class Unit:
    """One thing Micro may shorten: a tool call (its input and its result together, so the pair
    is always kept or projected as one), an image, a reasoning block, or an attached text.

    `size` is what it holds in the view as stored (tokens); `candidates` the directives that would
    shorten it, each with its estimated saving."""

    key: str
    entry_index: int
    size: int = 0
    candidates: list[tuple[Directive, int]] = field(default_factory=list)
    is_result: bool = False
    is_thinking: bool = False
    tool: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    note: NoteCandidate | None = None  # the second level, for a result


def _text_candidate(
    mid: str, index: int, text: str, keep_chars: int, count: Callable[[str], int]
) -> tuple[Directive, int] | None:
    if len(text) <= 2 * keep_chars + MIN_CUT_CHARS:
        return None
    d = TruncateText(message_id=mid, index=index, head=keep_chars, tail=keep_chars)
    cut = cut_middle(text, keep_chars, keep_chars, what=ATTACHED, again=ATTACHED_AGAIN)
    return d, count(text) - count(cut)


def _add_result(
    mid: str, part: ToolResultPart, unit: Unit, *, keep_chars: int, count: Callable[[str], int]
) -> None:
    text = part.text
    unit.is_result = True
    whole = count(text)
    unit.size += whole
    cut = whole
    d = TruncateResult(
        message_id=mid, tool_use_id=part.tool_use_id, head=keep_chars, tail=keep_chars
    )
    if len(text) > 2 * keep_chars + MIN_CUT_CHARS:
        cut = count(cut_middle(text, keep_chars, keep_chars))
        unit.candidates.append((d, whole - cut))
    # The note's 40-token cap in a fixed measure: a note is written once and must read the same
    # whatever the calibration (which follows the provider's reports) says at that moment.
    note = result_note(unit.tool or "tool", unit.tool_input, text, mid, estimate_tokens)
    spent = count(note)
    images = IMAGE_TOKENS_MAX * sum(isinstance(item, ImagePart) for item in part.content)
    unit.note = NoteCandidate(
        key=unit.key,
        directive=NoteResult(message_id=mid, tool_use_id=part.tool_use_id, note=note),
        from_whole=whole + images - spent,
        from_cut=cut - spent,
        cut_key=d.key,
    )
    for j, item in enumerate(part.content):
        if isinstance(item, ImagePart):
            placeholder = _image_placeholder(item)
            unit.size += IMAGE_TOKENS_MAX
            d2 = ReplaceImage(
                message_id=mid, index=j, tool_use_id=part.tool_use_id, placeholder=placeholder
            )
            unit.candidates.append((d2, 1000 - count(placeholder)))


def collect_units(
    view_entries: Sequence[MessageEntry], keep_chars: int, count: Callable[[str], int]
) -> list[Unit]:
    """Every unit of the view in order of first appearance (oldest first)."""
    units: dict[str, Unit] = {}

    def unit(key: str, index: int) -> Unit:
        found = units.get(key)
        if found is None:
            found = units[key] = Unit(key, index)
        return found

    for index, entry in enumerate(view_entries):
        origin = origin_of(entry)
        if origin in COMPACTION_ORIGINS:
            continue
        mid = entry.id
        attached = entry.message.role == "user" and origin is not None
        for i, part in enumerate(entry.message.content):
            if isinstance(part, ThinkingPart):
                u = unit(f"thinking:{mid}:{i}", index)
                u.is_thinking = True
                u.size = count(part.thinking) + 4
                u.candidates.append((DropThinking(message_id=mid, index=i), u.size))
            elif isinstance(part, ImagePart):
                u = unit(f"image:{mid}:{i}", index)
                placeholder = _image_placeholder(part)
                u.size = IMAGE_TOKENS_MAX
                # images cost ~1,000+ tokens; not worth decoding to know exactly
                d = ReplaceImage(message_id=mid, index=i, placeholder=placeholder)
                u.candidates.append((d, 1000 - count(placeholder)))
            elif isinstance(part, ToolUsePart):
                u = unit(f"call:{part.id}", index)
                u.size += count(_json(part.input))
                u.tool, u.tool_input = part.name, part.input
                directive, new = _plan_input(mid, part, keep_chars)
                if directive is not None:
                    u.candidates.append((directive, count(_json(part.input)) - count(_json(new))))
            elif isinstance(part, ToolResultPart):
                u = unit(f"call:{part.tool_use_id}", index)
                _add_result(mid, part, u, keep_chars=keep_chars, count=count)
            elif isinstance(part, TextPart) and attached:
                u = unit(f"text:{mid}:{i}", index)
                u.size = count(part.text)
                found = _text_candidate(mid, i, part.text, keep_chars, count)
                if found is not None:
                    u.candidates.append(found)
    return list(units.values())


def protected_keys(
    view_entries: Sequence[MessageEntry],
    units: Sequence[Unit],
    *,
    keep_results: int = DEFAULT_KEEP_RESULTS,
    keep_turns: int = DEFAULT_KEEP_TURNS,
    turn_budget: int | None = None,
) -> set[str]:
    """Keys of the units Micro must leave whole.

    - the newest `keep_results` tool results (with their calls), always;
    - units in the last `keep_turns` user turns, newest first, while their sizes (the newest
      results' included) fit `turn_budget` tokens; the first that does not fit and every older
      one lose protection (no budget: the whole turns are protected);
    - reasoning blocks of the current turn (since the last user prompt), always: providers
      expect the blocks of an unfinished tool loop back as they were.
    """
    keep: set[str] = set()
    newest: list[str] = []
    for entry in reversed(view_entries):
        for part in reversed(entry.message.tool_results):
            if len(newest) < keep_results:
                newest.append(f"call:{part.tool_use_id}")
    keep.update(newest)
    current = protected_start(view_entries, 1)
    keep.update(u.key for u in units if u.is_thinking and u.entry_index >= current)
    start = protected_start(view_entries, keep_turns)
    used = sum(u.size for u in units if u.key in keep)
    for u in reversed(units):
        if u.entry_index < start:
            break
        if u.key in keep:
            continue
        if turn_budget is not None and used + u.size > turn_budget:
            break
        keep.add(u.key)
        used += u.size
    return keep


def plan_micro(
    view_entries: Sequence[MessageEntry],
    need_to_free: int,
    *,
    keep_turns: int = DEFAULT_KEEP_TURNS,
    keep_chars: int = 200,
    keep_results: int = DEFAULT_KEEP_RESULTS,
    turn_budget: int | None = None,
    already: Collection[str] = (),
    count: Callable[[str], int] = estimate_tokens,
    must_free: int = 0,
) -> list[Directive]:
    """Pure: directives that free about `need_to_free` tokens, oldest unprojected units first.

    Protection is as `protected_keys` says. Long tool results keep `keep_chars` of head and tail
    around a marker; large tool inputs keep their keys and small fields, with notes for the big
    values (file-changing tools say the content was elided, never passing a note off as file
    content); attached texts (a user message with an origin) are cut like results; images become
    placeholders; reasoning blocks are dropped whole. Parts are never removed from a
    tool_use/tool_result pair, so pairing always holds. `already` holds the keys of directives in
    force, which are skipped.

    When all that frees less than `must_free`, unprotected results (cut ones included) become
    one-line notes, oldest first, until it does (`notes.plan_notes`).
    """
    if need_to_free <= 0:
        return []
    units = collect_units(view_entries, keep_chars, count)
    keep = protected_keys(
        view_entries,
        units,
        keep_results=keep_results,
        keep_turns=keep_turns,
        turn_budget=turn_budget,
    )
    planned: list[tuple[Directive, int]] = []
    freed = 0
    for u in units:
        if u.key in keep:
            continue
        for directive, saving in u.candidates:
            if directive.key in already or saving < MIN_SAVING_TOKENS:
                continue
            planned.append((directive, saving))
            freed += saving
        if freed >= need_to_free:
            break
    if freed < must_free:
        notes = [u.note for u in units if u.note is not None and u.key not in keep]
        plan_notes(notes, planned, already=already, freed=freed, must_free=must_free)
    return [d for d, _ in planned]
