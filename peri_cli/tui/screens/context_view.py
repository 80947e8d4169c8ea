"""/context: what fills the model's window, by part, as a bar and a table."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from peri_cli.tui.context import ContextReport
from peri_cli.tui.format import tokens

COLORS = ["dodger_blue2", "cyan", "medium_purple", "yellow", "green", "orange3", "deep_pink2"]
BAR_WIDTH = 60


def render_bar(report: ContextReport, width: int = BAR_WIDTH) -> Text:
    """Each part's cells in proportion to its tokens: the running total is rounded, not each
    part, so many small parts never add up to more than they hold (a part under half a cell
    shows in the table only)."""
    bar = Text()
    window = max(report.window, report.total, 1)
    so_far = drawn = 0
    for part, color in zip(report.parts, COLORS, strict=False):
        so_far += part.tokens
        end = min(width, round(so_far / window * width))
        bar.append("█" * (end - drawn), style=color)
        drawn = end
    bar.append("░" * (width - drawn), style="dim")
    return bar


def render_table(report: ContextReport) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    table.add_column("")
    table.add_column("Part")
    table.add_column("Tokens", justify="right")
    table.add_column("of window", justify="right")
    window = max(report.window, 1)
    for part, color in zip(report.parts, COLORS, strict=False):
        table.add_row(
            Text("█", style=color), part.label, f"{part.tokens:,}", f"{part.tokens / window:.1%}"
        )
    free = max(0, report.window - report.total)
    table.add_row(Text("░", style="dim"), "Free", f"{free:,}", f"{free / window:.1%}")
    return table


def stable_line(report: ContextReport) -> str | None:
    """How much of the input came from the provider's prompt cache, when it said."""
    if report.stable_share is None:
        return None
    n = report.stable_requests
    return (
        f"Stable prefix: {report.stable_share:.0%} of input read from the prompt cache "
        f"over {n:,} request{'s' if n != 1 else ''} after the first"
    )


def levels_line(report: ContextReport) -> str | None:
    """Micro's two levels in the view, and what each freed; None before Micro has acted."""
    lv = report.levels
    if lv is None or not lv.any:
        return None
    return (
        f"Micro: {lv.cut:,} result{'s' if lv.cut != 1 else ''} cut to head and tail "
        f"(freed {tokens(lv.cut_freed)}) · {lv.notes:,} as one-line notes "
        f"(freed {tokens(lv.notes_freed)} more); the originals stay in the transcript"
    )


class ContextView(ModalScreen[None]):
    DEFAULT_CSS = """
    ContextView { align: center middle; }
    ContextView > Vertical {
        width: 80;
        height: auto;
        border: round $accent;
        background: $surface;
        padding: 1 2;
    }
    ContextView #context-title { text-style: bold; }
    ContextView .gap { margin: 1 0 0 0; }
    ContextView #context-help { color: $text-muted; margin: 1 0 0 0; width: 100%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter", "close", "Close"),
    ]

    def __init__(self, report: ContextReport, *, estimated: bool = True) -> None:
        super().__init__()
        self.report = report
        self.estimated = estimated

    def compose(self) -> ComposeResult:
        r = self.report
        pct = r.total / r.window if r.window else 0
        approx = "about " if self.estimated else ""
        with Vertical():
            yield Label(
                Content(
                    f"Context: {approx}{tokens(r.total)} of {tokens(r.window)} tokens "
                    f"({pct:.0%}) · {r.messages} messages in the model's view"
                ),
                id="context-title",
            )
            yield Static(render_bar(r), classes="gap")
            yield Static(render_table(r), classes="gap")
            for line in (stable_line(r), levels_line(r)):
                if line is not None:
                    yield Static(line, classes="gap")
            yield Static(
                "Counts are estimates of the next request (o200k tokenizer, calibrated). "
                "/compact frees context now; /clear empties the visible history. Esc closes.",
                id="context-help",
            )

    def action_close(self) -> None:
        self.dismiss(None)
