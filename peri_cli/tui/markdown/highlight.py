"""Code coloured as Textual's `MarkdownFence` colours it, memoized (a streamed reply asks for
the same fence again and again); pygments is imported on first use."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from textual.content import Content

_HIGHLIGHTS: OrderedDict[tuple[str, str, bool, bool], Content] = OrderedDict()
_HIGHLIGHTS_KEPT = 256


def highlight(code: str, lexer: str, *, ansi: bool, dark: bool) -> Content:
    """Code colored as Textual's `MarkdownFence` colors it; memoized, as a streamed reply asks for
    the same fence again and again."""
    key = (code, lexer, ansi, dark)
    hit = _HIGHLIGHTS.get(key)
    if hit is not None:
        _HIGHLIGHTS.move_to_end(key)
        return hit
    from textual.highlight import highlight as textual_highlight  # imports pygments

    theme: Any
    if ansi:
        from textual.highlight import ANSIDarkHighlightTheme, ANSILightHighlightTheme

        theme = ANSIDarkHighlightTheme if dark else ANSILightHighlightTheme
    else:
        from textual.highlight import HighlightTheme

        theme = HighlightTheme
    content = textual_highlight(code, language=lexer or None, theme=theme)
    _HIGHLIGHTS[key] = content
    if len(_HIGHLIGHTS) > _HIGHLIGHTS_KEPT:
        _HIGHLIGHTS.popitem(last=False)
    return content
