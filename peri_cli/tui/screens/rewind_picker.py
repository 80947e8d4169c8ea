"""/rewind (or Esc Esc): pick one of your prompts, newest first and selected, then what to restore.

Enter applies at once, so /rewind, Enter, Enter undoes the last prompt entirely. `Choice` asks
one more question when it must (overwrite files changed outside Peri?).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from peri_cli.tui.format import one_line, plain

if TYPE_CHECKING:
    from peri_cli.session.rewind import PromptRef, RewindKind

# In this order: both first, so Enter Enter undoes the last prompt entirely.
KINDS: list[tuple[RewindKind, str]] = [
    ("both", "Restore code and conversation"),
    ("conversation", "Restore conversation only (files stay as they are)"),
    ("code", "Restore code only (the conversation stays)"),
]

_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 90%;
    max-width: 120;
    height: auto;
    max-height: 90%;
    border: round $accent;
    background: $surface;
    padding: 0 1;
}}
{name} .choice-title {{ text-style: bold; padding: 0 0 1 0; }}
{name} OptionList {{ height: auto; max-height: 24; border: none; }}
{name} .choice-help {{ color: $text-muted; padding: 1 0 0 0; }}
"""


@dataclass(frozen=True)
class RewindChoice:
    prompt: PromptRef
    kind: RewindKind


class RewindPicker(ModalScreen[RewindChoice | None]):
    DEFAULT_CSS = _CSS.format(name="RewindPicker")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(self, prompts: list[PromptRef], changed: dict[str, int] | None = None) -> None:
        """`changed`: files changed since each prompt (by id), said beside the code choices."""
        super().__init__()
        self.prompts = prompts
        self.changed = changed or {}
        self.chosen: PromptRef | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._title(), classes="choice-title", id="rewind-title")
            yield OptionList(*self._prompt_options(), id="rewind-list")
            yield Label("Enter choose · ↑↓ move · Esc back", classes="choice-help")

    def _title(self) -> Content:
        if self.chosen is None:
            return Content("Rewind to before which prompt? (newest first)")
        return Content.assemble("Rewind to before: ", plain(one_line(self.chosen.text, 70)))

    def _prompt_options(self) -> list[Option]:
        return [
            Option(Content.assemble(f"{p.number:>3}  ", plain(one_line(p.text, 90))), id=p.id)
            for p in self.prompts
        ]

    def _kind_options(self) -> list[Option]:
        assert self.chosen is not None
        files = self.changed.get(self.chosen.id)
        options = []
        for kind, label in KINDS:
            said = label
            if kind != "conversation" and files is not None:
                said += f" · {files} file{'s' if files != 1 else ''} changed since"
            options.append(Option(said, id=kind))
        return options

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        listing.highlighted = 0
        listing.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        listing = self.query_one(OptionList)
        if self.chosen is None:
            self.chosen = next(p for p in self.prompts if p.id == event.option.id)
            listing.clear_options()
            listing.add_options(self._kind_options())
            listing.highlighted = 0
            self.query_one("#rewind-title", Label).update(self._title())
            return
        kind = next(k for k, _ in KINDS if k == event.option.id)
        self.dismiss(RewindChoice(self.chosen, kind))

    def action_back(self) -> None:
        if self.chosen is None:
            self.dismiss(None)
            return
        self.chosen = None
        listing = self.query_one(OptionList)
        listing.clear_options()
        listing.add_options(self._prompt_options())
        listing.highlighted = 0
        self.query_one("#rewind-title", Label).update(self._title())


T = TypeVar("T")


class Choice(ModalScreen[T | None], Generic[T]):
    """A question with a few answers; the first is selected."""

    DEFAULT_CSS = _CSS.format(name="Choice")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Close")]

    def __init__(self, question: Content, answers: list[tuple[T, str]]) -> None:
        super().__init__()
        self.question = question
        self.answers = answers

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.question, classes="choice-title")
            yield OptionList(
                *(Option(label, id=str(i)) for i, (_, label) in enumerate(self.answers))
            )
            yield Label("Enter choose · ↑↓ move · Esc close", classes="choice-help")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        listing.highlighted = 0
        listing.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.answers[int(event.option.id or 0)][0])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
