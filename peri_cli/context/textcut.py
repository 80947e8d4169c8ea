"""Cutting text safely: where a long text may be cut without splitting what a reader sees as one
character, and the middle-cut with a marker saying what went (Micro's truncations use it)."""

from __future__ import annotations

import unicodedata


def _joins_previous(ch: str) -> bool:
    """True for a character that continues the grapheme before it (never start a piece with it)."""
    o = ord(ch)
    return (
        o == 0x200D  # zero-width joiner
        or 0xFE00 <= o <= 0xFE0F  # variation selectors
        or 0x1F3FB <= o <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xDC00 <= o <= 0xDFFF  # a low surrogate (lone surrogates from lax JSON)
        or 0xE0020 <= o <= 0xE007F  # emoji tag sequences
        or 0xE0100 <= o <= 0xE01EF  # variation selectors supplement
        or 0x1160 <= o <= 0x11FF  # Hangul medial vowels and final consonants (conjoining jamo)
        or unicodedata.category(ch) in ("Mn", "Mc", "Me")
    )


def _is_regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def is_boundary(text: str, i: int) -> bool:
    """Whether `text` may be cut before index `i` without splitting a character sequence."""
    if i <= 0 or i >= len(text):
        return True
    prev, cur = text[i - 1], text[i]
    if _joins_previous(cur) or prev == "\u200d" or 0xD800 <= ord(prev) <= 0xDBFF:
        return False
    if prev == "\r" and cur == "\n":
        return False
    if _is_regional(prev) and _is_regional(cur):
        run = 0
        while i - run - 1 >= 0 and _is_regional(text[i - run - 1]):
            run += 1
        return run % 2 == 0  # flags are pairs: cut only between two whole pairs
    return True


def _snap_back(text: str, i: int) -> int:
    while not is_boundary(text, i):
        i -= 1
    return i


def _snap_forward(text: str, i: int) -> int:
    while not is_boundary(text, i):
        i += 1
    return i


def cut_points(text: str, head: int, tail: int) -> tuple[int, int]:
    """Where to cut `text` to keep about `head` and `tail` characters: `text[end:start]` goes.

    Cuts prefer line ends near the limits and never split a surrogate pair, a combining sequence,
    an emoji ZWJ sequence, a flag or CRLF. Counts characters, not bytes.
    """
    if len(text) <= head + tail:
        return len(text), len(text)
    end = head
    newline = text.rfind("\n", head - head // 4, head)
    if head and newline > 0:
        end = newline + 1
    end = _snap_back(text, end)
    start = len(text) - tail
    newline = text.find("\n", start, start + tail // 4)
    if tail and newline >= 0:
        start = newline + 1
    return end, _snap_forward(text, max(start, end))


def cut_middle(
    text: str,
    head: int,
    tail: int,
    *,
    what: str = "this old tool result",
    again: str = "run the tool again if you need them",
) -> str:
    """`text` with its middle replaced by a marker saying how much was cut (see `cut_points`);
    text short enough to keep whole is returned unchanged."""
    end, start = cut_points(text, head, tail)
    cut = text[end:start]
    if not cut:
        return text
    lines = cut.count("\n")
    marker = (
        f"[… {len(cut):,} characters ({lines:,} lines) of {what} were cut by "
        f"context compaction; {again} …]"
    )
    before = text[:end]
    after = text[start:]
    sep_before = "" if not before or before.endswith("\n") else "\n"
    sep_after = "" if not after or after.startswith("\n") else "\n"
    return f"{before}{sep_before}{marker}{sep_after}{after}"
