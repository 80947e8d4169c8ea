"""Ctrl+R: search the prompt history as you type (fuzzy; this workspace's prompts first);
Enter puts the chosen one in the prompt."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from peri_cli.tui.format import one_line, plain
from peri_cli.tui.history import PromptHistory


class HistorySearch(ModalScreen[str | None]):
    DEFAULT_CSS = """
    HistorySearch { align: center middle; }
    HistorySearch > Vertical {
        width: 90%;
        max-width: 120;
        height: auto;
        max-height: 90%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    HistorySearch #history-title { text-style: bold; padding: 0 0 1 0; }
    HistorySearch OptionList { height: auto; max-height: 20; border: none; }
    HistorySearch #history-help { color: $text-muted; padding: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Close"),
        Binding("enter", "pick", "Use", priority=True),
        Binding("down,ctrl+n", "move(1)", "Down", show=False, priority=True),
        Binding("up,ctrl+p,ctrl+r", "move(-1)", "Up", show=False, priority=True),
    ]

    def __init__(self, history: PromptHistory, workspace: str, query: str = "") -> None:
        super().__init__()
        self.history = history
        self.workspace = workspace
        self.query_text = query
        self.found: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Search prompt history", id="history-title")
            yield Input(value=self.query_text, placeholder="Type to search…", id="history-query")
            yield OptionList(id="history-list")
            yield Label("Enter use · ↑↓ move · Esc close", id="history-help")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        listing.can_focus = False
        self._fill(self.query_text)
        self.query_one(Input).focus()

    def _fill(self, query: str) -> None:
        self.found = self.history.search(query, self.workspace)
        listing = self.query_one(OptionList)
        listing.clear_options()
        listing.add_options(Option(plain(one_line(t, 100))) for t in self.found)
        listing.highlighted = 0 if self.found else None
        count = f"{len(self.found)} match" + ("es" if len(self.found) != 1 else "")
        self.query_one("#history-title", Label).update(f"Search prompt history · {count}")

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def action_move(self, step: int) -> None:
        listing = self.query_one(OptionList)
        if self.found:
            current = listing.highlighted or 0
            listing.highlighted = max(0, min(len(self.found) - 1, current + step))

    def action_pick(self) -> None:
        listing = self.query_one(OptionList)
        if not self.found or listing.highlighted is None:
            self.dismiss(None)
            return
        self.dismiss(self.found[listing.highlighted])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
