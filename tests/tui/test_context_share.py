"""/context names the stable-prefix share when the provider reported cache figures."""

from __future__ import annotations

from peri_cli.tui.context import ContextPart, ContextReport
from peri_cli.tui.screens.context_view import stable_line


def test_stable_line_only_when_the_provider_reported_the_cache() -> None:
    parts = [ContextPart("History", 10)]
    assert stable_line(ContextReport(parts, 100, 1)) is None
    line = stable_line(ContextReport(parts, 100, 1, stable_share=0.934, stable_requests=12))
    assert line is not None and "93%" in line and "12 requests" in line
