"""Untrusted text made safe to show or store: control characters visible, lone surrogates replaced.

Every string from a model, a tool, a file or a provider passes `visible` before it becomes markup,
`Text` or Markdown on the user's terminal, so no escape sequence (OSC 52 clipboard writes, title
changes, screen wipes, fake prompts drawn outside a widget) ever reaches it raw.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")

# C0 controls (except tab and newline) become their Control Pictures (ESC -> ␛, CR -> ␍),
# DEL becomes ␡, C1 controls (U+0080-U+009F) and the bidirectional overrides that can reorder
# what a reader sees ("Trojan Source") become a visible <U+XXXX>.
_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_TABLE[0x7F] = "\u2421"
_TABLE.update({c: f"<U+{c:04X}>" for c in range(0x80, 0xA0)})
_TABLE.update({c: f"<U+{c:04X}>" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: str) -> str:
    """`text` with every control character (but tab and newline) shown as a visible form."""
    if not _UNSAFE.search(text):
        return text  # the common case costs one scan
    return scrub_surrogates(text.translate(_TABLE))


def has_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def scrub_surrogates(text: str) -> str:
    """Lone surrogates (which UTF-8 cannot encode) replaced with U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text) if has_surrogates(text) else text
