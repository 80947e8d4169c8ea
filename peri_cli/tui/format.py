"""Small pure formatters shared by the widgets: token counts, ages, money, one-line previews, and
the one way untrusted text becomes something to draw (`plain`: never markup, never raw bytes)."""

from __future__ import annotations

from datetime import datetime

from textual.content import Content

from peri_cli.base.textsafe import visible


def tokens(n: int | None) -> str:
    """12, 1.2k, 12.3k, 123k, 1.2M; "?" when unknown."""
    if n is None:
        return "?"
    if n < 1000:
        return str(n)
    if n < 100_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def cost(usd: float | None) -> str:
    if usd is None:
        return "$?"
    if usd < 0.01:
        return f"${usd:.4f}" if usd else "$0.00"
    return f"${usd:.2f}"


def elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60:02d}s"


def age(seconds: float) -> str:
    """How long ago, coarse: now, 5m, 3h, 2d, 7w."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "now"
    for unit, size in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


def epoch(iso: str) -> float:
    """Seconds since the epoch of an ISO timestamp as the transcript writes it; 0 if unparsable."""
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return 0.0


def one_line(text: str, width: int = 80) -> str:
    """A preview on one line: runs of spaces collapsed, line breaks shown as ↵ (so two commands
    never read as one), control characters visible, cut to `width` with an ellipsis."""
    lines = (" ".join(line.split()) for line in visible(text).split("\n"))
    flat = " ↵ ".join(line for line in lines if line)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def plain(text: str, style: str = "") -> Content:
    """Text from anywhere (a model, a tool, a file, a provider, the user) as drawable content:
    control characters in visible forms, brackets as brackets. The only way such text is shown."""
    shown = visible(text)
    return Content.styled(shown, style) if style else Content(shown)
