"""One line of a command's terminal output as `Text`: SGR sequences (colours, bold, ...) become
styles; everything else, text and every other control sequence alike, passes `visible`, so an
OSC title or clipboard write, a cursor move or a screen wipe shows as text and never acts."""

from __future__ import annotations

import re

from rich.ansi import AnsiDecoder
from rich.text import Text

from peri_cli.base.textsafe import visible

_SGR = re.compile(r"\x1b\[[0-9;]*m")


def ansi_text(line: str) -> Text:
    """`line` with its SGR styles applied; drawn on one row, cut with an ellipsis."""
    decoder = AnsiDecoder()  # reads the SGR sequences alone: it keeps the style between them
    out = Text(no_wrap=True, overflow="ellipsis", end="")
    start = 0
    for match in _SGR.finditer(line):
        out.append(visible(line[start : match.start()]), decoder.style or None)
        decoder.decode_line(match.group(0))
        start = match.end()
    out.append(visible(line[start:]), decoder.style or None)
    return out
