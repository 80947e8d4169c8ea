"""A rule across the conversation saying what a compaction or /clear did and what it freed; a
Full compact's rule has its summary folded under it (Enter or a click on it shows the text)."""

from __future__ import annotations

from rich.rule import Rule
from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.tui.format import tokens
from peri_cli.tui.widgets.folded_text import FoldedText

_WHAT = {
    "clear": "Cleared: the model's visible history starts empty (same session, frozen prompt kept)",
    "full": "Compacted (Full): older history summarized",
    "micro": "Compacted (Micro): old tool output trimmed in the model's view",
}
SUMMARY_TITLE = "Summary: what the model sees now of the older history"


def describe(
    strategy: str, before: int | None, after: int | None, affected: int = 0, detail: str = ""
) -> str:
    text = _WHAT.get(strategy, f"Compacted ({strategy})")
    if strategy != "clear" and affected:
        text += f", {affected} message{'s' if affected != 1 else ''} affected"
    if before is not None and after is not None:
        text += (
            f" · {tokens(before)} → {tokens(after)} tokens, freed {tokens(max(0, before - after))}"
        )
    else:
        text += " · tokens freed: unknown"
    if detail:
        text += f" · {detail}"
    return text


class Separator(Widget):
    DEFAULT_CSS = """
    Separator {
        height: auto;
        margin: 1 0 0 0;
        & > .separator--rule { color: $accent; }
        & > FoldedText { margin: 0; }
    }
    """

    def __init__(
        self,
        strategy: str,
        before: int | None = None,
        after: int | None = None,
        affected: int = 0,
        detail: str = "",
        *,
        summary: str = "",
    ) -> None:
        super().__init__()
        self.strategy = strategy
        self.description = describe(strategy, before, after, affected, detail)
        self.summary = summary
        self.rule = Static(
            Rule(Text(visible(self.description)), style="dim", characters="─"),
            classes="separator--rule",
        )
        self.fold = FoldedText(SUMMARY_TITLE, summary) if summary.strip() else None

    def compose(self) -> ComposeResult:
        yield self.rule
        if self.fold is not None:
            yield self.fold
