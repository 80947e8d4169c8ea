"""/context names the stable-prefix share when the provider reported cache figures."""

from __future__ import annotations

from peri_cli.context.levels import Levels
from peri_cli.tui.context import ContextPart, ContextReport
from peri_cli.tui.format import tokens
from peri_cli.tui.screens.context_view import levels_line, stable_line


def test_stable_line_only_when_the_provider_reported_the_cache() -> None:
    parts = [ContextPart("History", 10)]
    assert stable_line(ContextReport(parts, 100, 1)) is None
    line = stable_line(ContextReport(parts, 100, 1, stable_share=0.934, stable_requests=12))
    assert line is not None and "93%" in line and "12 requests" in line


def test_levels_line_names_both_levels_and_what_they_freed() -> None:
    parts = [ContextPart("History", 10)]
    assert levels_line(ContextReport(parts, 100, 1)) is None
    assert levels_line(ContextReport(parts, 100, 1, levels=Levels())) is None
    levels = Levels(cut=12, cut_freed=20_345, notes=30, notes_freed=5_000)
    line = levels_line(ContextReport(parts, 100, 1, levels=levels))
    assert line is not None
    assert "12 results cut to head and tail" in line and "30 as one-line notes" in line
    assert tokens(20_345) in line and tokens(5_000) in line
