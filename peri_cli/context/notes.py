"""Micro's second level: a tool result already cut to head and tail becomes a one-line note.

Cutting leaves about 150 tokens per result, so in a turn of a hundred calls the cut stubs alone
outgrow a small window. A note (at most `NOTE_MAX_TOKENS`) names the tool, what it was asked,
how big the result was and where the original lies in the transcript; its call stays whole
beside it, so the pair is never separated. Notes are planned oldest first and only for what
cutting could not free; each is recorded once with its text, so it never changes again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from peri_cli.context.directives import Directive, NoteResult

NOTE_MAX_TOKENS = 40
MIN_NOTE_SAVING = 16  # tokens; a note that saves less is not worth a directive
SUMMARY_MAX_CHARS = 40
# The input keys that say best what a call was about, in the order they are looked for.
SUMMARY_KEYS = (
    "file_path",
    "path",
    "notebook_path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
)


def input_summary(tool_input: Mapping[str, Any], limit: int = SUMMARY_MAX_CHARS) -> str:
    """A short, one-line account of a call's input: its most telling value, or its JSON."""
    value = next((tool_input[k] for k in SUMMARY_KEYS if isinstance(tool_input.get(k), str)), None)
    text = value if isinstance(value, str) else json.dumps(tool_input, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def result_note(
    tool: str,
    tool_input: Mapping[str, Any],
    text: str,
    entry_id: str,
    count: Callable[[str], int],
) -> str:
    """The note shown instead of a result: tool, input summary, size, and the transcript entry
    (the tail of its id) that keeps the original; shortened until it fits NOTE_MAX_TOKENS."""
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    where = f"transcript entry …{entry_id[-8:]}"
    limit = SUMMARY_MAX_CHARS
    while True:
        summary = input_summary(tool_input, limit)
        note = (
            f"[{tool}({summary}): {len(text):,} chars, {lines:,} lines; moved out of view by "
            f"context compaction, original in {where}]"
        )
        if count(note) <= NOTE_MAX_TOKENS or limit == 0:
            return note
        limit = max(0, limit - 10)


@dataclass(frozen=True)
class NoteCandidate:
    """A result's note, with what it saves from the whole result and from its cut stub."""

    key: str  # the unit's key
    directive: NoteResult
    from_whole: int
    from_cut: int
    cut_key: str  # the key of the result's first-level cut


def plan_notes(
    candidates: Sequence[NoteCandidate],
    planned: list[tuple[Directive, int]],
    *,
    already: Collection[str],
    freed: int,
    must_free: int,
) -> int:
    """Add notes to `planned`, oldest first, until `freed` reaches `must_free`; returns the new
    total. A cut planned in the same step for a result that gets a note is dropped: the note
    replaces it, so recording both would only add a directive that never shows."""
    for c in candidates:
        if freed >= must_free:
            break
        if c.directive.key in already:
            continue
        cut = next((i for i, (d, _) in enumerate(planned) if d.key == c.cut_key), None)
        saving = c.from_cut if c.cut_key in already else c.from_whole
        if saving < MIN_NOTE_SAVING:
            continue
        if cut is not None:
            freed -= planned.pop(cut)[1]
        planned.append((c.directive, saving))
        freed += saving
    return freed
