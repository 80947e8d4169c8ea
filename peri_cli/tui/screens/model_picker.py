"""/model's list: the provider's models, its current ones first (the newest of each family and
Peri's default), then the rest as the provider lists them; the one in use marked. Enter
switches, Esc keeps the model. Names come from the provider: drawn through `plain`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from peri_cli.base.first_look import DEFAULT_MODELS
from peri_cli.base.model_alias import ALIASES
from peri_cli.tui.format import one_line, plain

MAX_SHOWN = 500  # a provider (an OpenRouter) can list thousands; the rest by /model NAME


def ordered(listed: Sequence[str], provider: str) -> tuple[list[str], int]:
    """`listed` with the current models first (Peri's default for `provider`, then the newest
    of each family), once each; and how many lead as current."""
    current = [DEFAULT_MODELS.get(provider, ""), *ALIASES.values()]
    first = list(dict.fromkeys(name for name in current if name and name in listed))
    rest = [name for name in dict.fromkeys(listed) if name not in first]
    return [*first, *rest][:MAX_SHOWN], len(first)


class ModelPicker(ModalScreen[str | None]):
    """Dismissed with the picked model's name, or None (Esc)."""

    DEFAULT_CSS = """
    ModelPicker { align: center middle; }
    ModelPicker > Vertical {
        width: 90%; max-width: 90; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ModelPicker .choice-title { text-style: bold; }
    ModelPicker OptionList { height: auto; border: none; }
    ModelPicker .choice-help { color: $text-muted; padding: 1 0 0 0; width: 100%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Back")]

    def __init__(self, models: Sequence[str], *, now: str, current: int) -> None:
        """`current`: how many of `models` lead as the provider's current ones."""
        super().__init__()
        self.models, self.now, self.current = list(models), now, current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Switch the model", classes="choice-title")
            options = [self._option(i, name) for i, name in enumerate(self.models)]
            yield OptionList(*options, id="model-list")
            yield Label("Enter switch · ↑↓ move · Esc keep it", classes="choice-help")

    def _option(self, index: int, name: str) -> Option:
        marks = ["in use"] if name == self.now else []
        if index < self.current:
            marks.append("current")
        return Option(
            Content.assemble(
                plain(one_line(name, 70), "bold" if name == self.now else ""),
                Content.styled(f"  ({', '.join(marks)})" if marks else "", "$accent"),
            ),
            id=f"m{index}",
        )

    def on_resize(self) -> None:
        room = int(self.size.height * 0.9) - 2 - 1 - 2
        self.query_one(OptionList).styles.max_height = max(3, room)

    def on_mount(self) -> None:
        self.on_resize()
        listing = self.query_one(OptionList)
        listing.highlighted = self.models.index(self.now) if self.now in self.models else 0
        listing.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.models[int((event.option.id or "m0")[1:])])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
