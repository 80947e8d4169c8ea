"""A rule across the conversation saying what a compaction or /clear did and what it freed."""

from __future__ import annotations

from rich.rule import Rule
from rich.text import Text
from textual.widgets import Static

from peri_cli.core.textsafe import visible
from peri_cli.tui.format import tokens

_WHAT = {
    "clear": "Cleared: the model's visible history starts empty (same session, frozen prompt kept)",
    "full": "Compacted (Full): older history summarized",
    "micro": "Compacted (Micro): old tool output trimmed in the model's view",
}


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


class Separator(Static):
    DEFAULT_CSS = """
    Separator {
        margin: 1 0 0 0;
        color: $accent;
    }
    """

    def __init__(
        self,
        strategy: str,
        before: int | None = None,
        after: int | None = None,
        affected: int = 0,
        detail: str = "",
    ) -> None:
        self.description = describe(strategy, before, after, affected, detail)
        super().__init__(Rule(Text(visible(self.description)), style="dim", characters="─"))
