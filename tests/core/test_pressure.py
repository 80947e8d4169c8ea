"""Measuring pressure: from usage reports, after Micro and Full, and the tokenizer-free bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from peri_cli.core.messages import (
    TextPart,
    ToolUsePart,
    Usage,
    user_text,
)
from peri_cli.core.pressure import measure_pressure, token_bound
from peri_cli.core.projection import project
from peri_cli.core.tokens import TokenCounter
from peri_cli.core.transcript import CompactBoundary, Entry, ProjectionEntry
from tests.core.builders import assistant, counter, entry, read_use, results


def test_pressure_from_usage_plus_what_was_added_since() -> None:
    c = counter()
    added = entry(results("t9", "new output " * 100))
    entries: list[Entry] = [
        entry(user_text("go")),
        entry(assistant(read_use("t9")), Usage(input_tokens=500, cache_read_input_tokens=300)),
        added,
    ]
    p = measure_pressure(entries, window=10_000, base_tokens=999, count_messages=c.count_messages)
    assert p.from_usage
    assert p.tokens == 800 + c.count_messages([added.message])
    assert p.key == (entries[1].id, added.id)


def test_pressure_subtracts_what_micro_freed_and_estimates_after_a_boundary() -> None:
    c = counter()
    entries: list[Entry] = [
        entry(user_text("go")),
        entry(assistant(TextPart(text="ok")), Usage(input_tokens=1000, output_tokens=10)),
    ]
    entries.append(ProjectionEntry(directives=[], tokens_before=1010, tokens_after=610))
    p = measure_pressure(entries, window=10_000, base_tokens=50, count_messages=c.count_messages)
    assert p.tokens == 610 and p.key[0] == entries[1].id
    summary = entry(user_text("summary"))
    entries += [summary, CompactBoundary(summary_id=summary.id)]
    p = measure_pressure(entries, window=10_000, base_tokens=50, count_messages=c.count_messages)
    assert not p.from_usage and p.tokens == 50 + c.count_messages([summary.message])


def test_pressure_without_usage_counts_the_base() -> None:
    c = counter()
    entries: list[Entry] = [entry(user_text("hello there"))]
    p = measure_pressure(entries, window=100, base_tokens=40, count_messages=c.count_messages)
    assert p.tokens == 40 + c.count_messages(project(entries)) and p.ratio == p.tokens / 100


# --- the tokenizer-free bound ------------------------------------------------------------------


TIGHT = TokenCounter(ratio=2.0)  # tiktoken when available, at the highest calibration


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=400))
def test_the_byte_bound_is_never_below_the_calibrated_count(text: str) -> None:
    messages = [
        user_text(text),
        assistant(ToolUsePart(id="1", name="Write", input={"file_path": text, "content": text})),
        results("1", text),
    ]
    assert token_bound(messages) >= TIGHT.count_messages(messages)
