"""What Micro's two levels hold in the current view, and what each freed: the numbers `/context`
shows (results cut to head and tail; results shown as one-line notes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from peri_cli.base.messages import Message
from peri_cli.context.directives import NoteResult, TruncateResult, active_directives
from peri_cli.context.projection import render_message, visible_entries
from peri_cli.session.transcript import Entry


@dataclass(frozen=True)
class Levels:
    cut: int = 0  # results shown cut to head and tail (first level)
    cut_freed: int = 0  # tokens the first level frees (cuts, elided inputs, placeholders)
    notes: int = 0  # results shown as one-line notes (second level)
    notes_freed: int = 0  # tokens the notes free beyond the first level

    @property
    def any(self) -> bool:
        return bool(self.cut or self.notes)


def projection_levels(entries: Sequence[Entry], count: Callable[[Message], int]) -> Levels:
    """Pure: each directed message of the view counted whole, with the first level only, and
    with both levels, so each level's saving is measured, not estimated."""
    directives = active_directives(entries)
    cut = cut_freed = notes = notes_freed = 0
    for entry in visible_entries(entries):
        ds = directives.get(entry.id)
        if not ds:
            continue
        noted = {d.tool_use_id for d in ds if isinstance(d, NoteResult)}
        first = [d for d in ds if not isinstance(d, NoteResult)]
        whole = count(entry.message)
        one = count(render_message(entry.message, first))
        both = count(render_message(entry.message, ds)) if noted else one
        cut += len({d.tool_use_id for d in ds if isinstance(d, TruncateResult)} - noted)
        notes += len(noted)
        cut_freed += whole - one
        notes_freed += one - both
    return Levels(cut, cut_freed, notes, notes_freed)
