"""Long pastes in the prompt: 20 lines or more show as one `[Pasted text #N +L lines]` tag, and
sending puts the pasted text back in its place, whole."""

from __future__ import annotations

import re

LONG_PASTE_LINES = 20
_TAG = re.compile(r"\[Pasted text #(\d+) \+\d+ lines?\]")


def normalized(text: str) -> str:
    """A terminal sends a paste's line breaks as CR: the prompt holds them as LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def line_count(text: str) -> int:
    return len(text.splitlines())


def tag(number: int, text: str) -> str:
    lines = line_count(text)
    return f"[Pasted text #{number} +{lines} line{'s' if lines != 1 else ''}]"


def expand(text: str, pastes: dict[int, str]) -> str:
    """`text` with each tag of a paste it still holds replaced by that paste; a tag the user
    edited, or typed for a paste that does not exist, stays as it is."""

    def whole(match: re.Match[str]) -> str:
        pasted = pastes.get(int(match[1]))
        return pasted if pasted is not None and match[0] == tag(int(match[1]), pasted) else match[0]

    return _TAG.sub(whole, text) if pastes else text
