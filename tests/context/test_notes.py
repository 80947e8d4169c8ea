"""Micro's second level: old results become one-line notes only when cutting is not enough."""

from __future__ import annotations

from peri_cli.base.messages import ImagePart, Message, TextPart, ToolResultPart
from peri_cli.context.directives import (
    Directive,
    NoteResult,
    TruncateResult,
    active_directives,
    dump_directives,
)
from peri_cli.context.levels import Levels, projection_levels
from peri_cli.context.micro import plan_micro
from peri_cli.context.notes import NOTE_MAX_TOKENS, input_summary, result_note
from peri_cli.context.projection import project, render_message
from peri_cli.context.viewrules import validate_view
from peri_cli.session.transcript import Entry, MessageEntry, ProjectionEntry
from tests.builders import counter, entry, long_turn
from tests.context.test_micro import PNG

COUNT = counter().count_text
BIG = 10**9


def plan(entries: list[MessageEntry], must_free: int, already: set[str] | None = None):  # type: ignore[no-untyped-def]
    """What Micro plans in one long turn (budgeted protection, as the Compactor configures it)."""
    return plan_micro(
        entries,
        BIG,
        keep_turns=3,
        keep_chars=200,
        turn_budget=3_000,
        already=already or set(),
        count=COUNT,
        must_free=must_free,
    )


def with_directives(entries: list[MessageEntry], *steps: list[Directive]) -> list[Entry]:
    out: list[Entry] = list(entries)
    out += [ProjectionEntry(directives=dump_directives(step)) for step in steps]
    return out


def test_no_note_while_cutting_frees_enough() -> None:
    entries = long_turn(12)
    cuts = plan(entries, 0)
    assert cuts and all(isinstance(d, TruncateResult) for d in cuts)
    assert plan(entries, 100) == cuts  # what the cuts free already covers it


def test_notes_come_oldest_first_and_only_as_many_as_needed() -> None:
    entries = long_turn(12)
    cuts = plan(entries, 0)
    whole = [r.text for m in project(entries) for r in m.tool_results]
    stubs = [r.text for m in project(with_directives(entries, cuts)) for r in m.tool_results]
    freed = sum(COUNT(a) - COUNT(b) for a, b in zip(whole, stubs, strict=True))
    planned = plan(entries, freed + 300)
    notes = [d for d in planned if isinstance(d, NoteResult)]
    assert notes and len(notes) < len(cuts)
    assert [n.tool_use_id for n in notes] == [f"r{k}" for k in range(len(notes))]
    # A result that gets a note is not also cut in the same step: the note replaces the cut.
    cut_ids = {d.tool_use_id for d in planned if isinstance(d, TruncateResult)}
    assert not cut_ids & {n.tool_use_id for n in notes}
    assert cut_ids | {n.tool_use_id for n in notes} == {d.tool_use_id for d in cuts}


def test_cut_stubs_in_force_become_notes_oldest_first_and_protection_holds() -> None:
    entries = long_turn(12)
    cuts = plan(entries, 0)
    already = {d.key for d in cuts}
    planned = plan(entries, BIG, already)
    assert all(isinstance(d, NoteResult) for d in planned)  # nothing is cut twice
    assert [d.tool_use_id for d in planned] == [d.tool_use_id for d in cuts]
    view = project(with_directives(entries, cuts, planned))
    assert validate_view(view) == []
    texts = [r.text for m in view for r in m.tool_results]
    assert len(texts) == 12  # every call keeps its result
    assert all("moved out of view" in t for t in texts[: len(cuts)])
    assert all("moved out of view" not in t and "cut by" not in t for t in texts[len(cuts) :])
    assert texts[-1] == entries[-1].message.tool_results[0].text  # the newest is whole
    # A second pass finds nothing left to do: notes are recorded once.
    assert plan(entries, BIG, already | {d.key for d in planned}) == []


def test_a_note_is_short_and_says_what_and_where() -> None:
    text = "x = 1\n" * 3_000
    note = result_note(
        "Read", {"file_path": "src/app.py", "limit": 10}, text, "0193-abcd-1234ef567890", COUNT
    )
    assert COUNT(note) <= NOTE_MAX_TOKENS and "\n" not in note
    assert note.startswith("[Read(src/app.py): 18,000 chars, 3,000 lines;")
    assert "transcript entry …ef567890" in note
    command = {"command": "grep -rn " + "very_long_pattern_" * 40 + " ."}
    long = result_note("Bash", command, text, "e" * 36, COUNT)
    assert COUNT(long) <= NOTE_MAX_TOKENS and long.startswith("[Bash(grep -rn very_long")
    assert len(input_summary(command)) <= 40
    assert input_summary({"a": 1}) == '{"a": 1}'


def test_a_note_replaces_text_and_images_and_wins_over_a_cut() -> None:
    content = [TextPart(text="a" * 5_000), ImagePart(media_type="image/png", data=PNG)]
    part = ToolResultPart(tool_use_id="t1", content=content, is_error=True)
    stored = entry(Message(role="user", content=[part]))
    note = NoteResult(message_id=stored.id, tool_use_id="t1", note="[Read(a.py): a note]")
    cut = TruncateResult(message_id=stored.id, tool_use_id="t1", head=10, tail=10)
    rendered = render_message(stored.message, [cut, note])
    (shown,) = rendered.tool_results
    assert shown.text == "[Read(a.py): a note]" and shown.is_error
    assert [p.type for p in shown.content] == ["text"]
    assert render_message(stored.message, [note, cut]) == rendered  # the note wins either way
    assert stored.message.tool_results[0].text == "a" * 5_000  # the record is untouched


def test_notes_read_back_from_the_record() -> None:
    entries = long_turn(8)
    notes = plan(entries, BIG)
    recorded = with_directives(entries, notes)
    found = [d for ds in active_directives(recorded).values() for d in ds]
    assert [d.key for d in found] == [d.key for d in notes]


def test_levels_count_each_level_and_measure_what_it_freed() -> None:
    entries = long_turn(12)
    cuts = plan(entries, 0)
    assert projection_levels(entries, counter().count_message) == Levels()
    one = projection_levels(with_directives(entries, cuts), counter().count_message)
    assert one.cut == len(cuts) and one.notes == 0 and one.cut_freed > 0
    notes = plan(entries, BIG, {d.key for d in cuts})[:3]
    both = projection_levels(with_directives(entries, cuts, notes), counter().count_message)
    assert (both.cut, both.notes) == (len(cuts) - 3, 3)
    assert both.cut_freed == one.cut_freed and both.notes_freed > 0


def test_a_note_reads_the_same_whatever_the_calibration() -> None:
    """A counter calibrated toward the provider's reports (here at its clamp, 2x: a ~37-token
    note would count 74) must not strip the input from the notes: a note is written once, and
    it names what it replaced."""
    inflated = counter()
    inflated.reset_calibration(2.0)
    for count in (inflated.count_text, COUNT):
        entries = long_turn(12)
        cuts = plan(entries, 0)
        planned = plan_micro(
            entries,
            BIG,
            keep_turns=3,
            keep_chars=200,
            turn_budget=3_000,
            already={d.key for d in cuts},
            count=count,
            must_free=BIG,
        )
        view = project(with_directives(entries, cuts, planned))
        notes = [r.text for m in view for r in m.tool_results if "moved out of view" in r.text]
        assert len(notes) == len(cuts)
        for n, note in enumerate(notes):
            assert note.startswith(f"[Read(f{n}.py): ") and COUNT(note) <= NOTE_MAX_TOKENS
