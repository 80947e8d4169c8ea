"""/copy: the last reply the user can see, and the fenced code blocks in it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peri_cli.session.transcript import Entry

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[^\n]*\n(.*?)^\1\2[ \t]*$", re.M | re.S)


def last_reply(entries: Sequence[Entry]) -> str | None:
    """The text of the newest assistant message in the view (None when there is none)."""
    from peri_cli.context.projection import visible_entries

    for entry in reversed(visible_entries(entries)):
        message = entry.message
        if message.role == "assistant" and message.text.strip():
            return message.text
    return None


def code_blocks(text: str) -> list[str]:
    """The bodies of the fenced code blocks, in order (without their fences)."""
    return [m.group(3) for m in _FENCE.finditer(text)]
