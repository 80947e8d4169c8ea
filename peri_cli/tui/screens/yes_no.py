"""A modal yes/no question about something the repository asks for (trusting a folder, starting a
project's MCP server): a scrollable body, two numbered choices, and Esc to decide later.

The body is built by the subclass from `Text` pieces (repository strings passed through
`visible`); the choices are Peri's own words."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Static

Choices = list[tuple[bool, str, str]]  # (answer, label, what it means)


class YesNoScreen(ModalScreen[bool | None]):
    """Yes (True), no (False), or no answer yet (None: Esc, asked again next time)."""

    DEFAULT_CSS = """
    YesNoScreen { align: center middle; }
    YesNoScreen > Vertical {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    YesNoScreen VerticalScroll { height: auto; max-height: 20; }
    YesNoScreen .choices { padding: 1 0 0 0; }
    YesNoScreen .help { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False, priority=True),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("enter", "choose", "Choose", priority=True),
        Binding("1,y", "answer(True)", "Yes"),
        Binding("2,n", "answer(False)", "No"),
        Binding("escape", "dismiss_none", "Decide later"),
    ]
    CHOICES: ClassVar[Choices] = []
    ID = "question"  # the ids of the parts: <ID>-body, <ID>-choices, <ID>-help

    selected = reactive(0)

    def body(self) -> Text:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll():
                yield Static(self.body(), id=f"{self.ID}-body")
            yield Static(self._choices(), id=f"{self.ID}-choices", classes="choices")
            yield Static(
                Text("↑↓ Enter, or 1 / 2 (y / n); Esc decides later (asked again next time)"),
                id=f"{self.ID}-help",
                classes="help",
            )

    def _choices(self) -> Text:
        text = Text()
        for i, (_, label, note) in enumerate(self.CHOICES):
            line = f"{i + 1}. {label}"
            if i == self.selected:
                text.append(f" › {line} ", style="reverse")
            else:
                text.append(f"   {line} ")
            text.append(f"  {note}\n", style="dim")
        return text

    def watch_selected(self) -> None:
        if self.is_mounted:
            self.query_one(f"#{self.ID}-choices", Static).update(self._choices())

    def action_move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(self.CHOICES)

    def action_choose(self) -> None:
        self.dismiss(self.CHOICES[self.selected][0])

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
