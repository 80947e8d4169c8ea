"""Measuring pressure: from usage reports, after Micro and Full, and the tokenizer-free bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from peri_cli.base.messages import (
    TextPart,
    ToolUsePart,
    Usage,
    user_text,
)
from peri_cli.context.pressure import measure_pressure, stable_prefix_share, token_bound
from peri_cli.context.projection import project
from peri_cli.context.tokens import TokenCounter
from peri_cli.session.transcript import CompactBoundary, Entry, MessageEntry, ProjectionEntry
from tests.builders import assistant, counter, entry, read_use, results


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


# --- no usage, and the stable prefix ---------------------------------------------------------


def test_zero_usage_is_no_usage_and_an_earlier_report_or_the_estimate_is_used() -> None:
    c = counter()
    reported = entry(assistant(TextPart(text="a")), Usage(input_tokens=700))
    entries: list[Entry] = [
        entry(user_text("go")),
        reported,
        entry(user_text("more " * 50)),
        entry(assistant(TextPart(text="b")), Usage()),  # a provider that reported nothing
        entry(user_text("again")),
    ]
    p = measure_pressure(entries, window=10_000, base_tokens=0, count_messages=c.count_messages)
    assert p.from_usage and p.key[0] == reported.id
    assert p.tokens == 700 + c.count_messages([e.message for e in entries[2:]])  # type: ignore[union-attr]
    alone = measure_pressure(
        entries[2:], window=10_000, base_tokens=40, count_messages=c.count_messages
    )
    assert not alone.from_usage and alone.tokens == 40 + c.count_messages(project(entries[2:]))


def test_stable_prefix_share_over_the_requests_after_the_first() -> None:
    def reply(read: int, written: int, uncached: int, **extra: object) -> MessageEntry:
        usage = Usage(
            input_tokens=uncached, cache_read_input_tokens=read, cache_creation_input_tokens=written
        )
        return MessageEntry.model_validate(
            {"message": assistant(TextPart(text="x")), "usage": usage, **extra}
        )

    entries: list[Entry] = [
        entry(user_text("go")),
        reply(0, 5_000, 10),  # the first request has nothing to read: left out
        reply(5_000, 1_000, 10),
        reply(5_900, 100, 0, usage_estimated=True),  # an estimate knows nothing of the cache
        reply(6_000, 1_000, 0),
    ]
    share = stable_prefix_share(entries)
    assert (share.cache_read, share.total, share.requests) == (11_000, 13_010, 2)
    assert share.share == 11_000 / 13_010
    assert stable_prefix_share(entries[:2]).share is None
