"""Small pure formatters shared by the widgets: token counts, ages, money, one-line previews."""

from __future__ import annotations

from datetime import datetime

from rich.markup import escape


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
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def markup(text: str) -> str:
    """User or model text made safe for Textual markup."""
    return escape(text)
