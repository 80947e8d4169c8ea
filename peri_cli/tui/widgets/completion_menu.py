"""The popup above the prompt listing slash commands or `@path`s that match what is typed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from peri_cli.base.textsafe import visible

if TYPE_CHECKING:
    from peri_cli.tui.completion import Candidate


class CompletionMenu(OptionList, can_focus=False):
    DEFAULT_CSS = """
    CompletionMenu {
        height: auto;
        max-height: 10;
        border: round $accent 50%;
        background: $surface;
        padding: 0;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.candidates: list[Candidate] = []
        self.display = False

    @property
    def is_open(self) -> bool:
        return bool(self.display)

    def show(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        if not candidates:
            self.close()
            return
        width = max(len(visible(c.label)) for c in candidates) + 2
        self.set_options(
            Option(
                Content.assemble(
                    (visible(c.label).ljust(width), "bold"), (visible(c.description), "dim")
                )
            )
            for c in candidates
        )
        self.highlighted = 0
        self.display = True

    def close(self) -> None:
        self.candidates = []
        self.display = False

    def move(self, step: int) -> None:
        if self.candidates:
            current = self.highlighted or 0
            self.highlighted = (current + step) % len(self.candidates)

    @property
    def current(self) -> Candidate | None:
        if not self.candidates or self.highlighted is None:
            return None
        return self.candidates[self.highlighted]
