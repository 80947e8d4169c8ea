"""/output-style's list: each style with its description and where it comes from, the one the
session shown has and the one the settings name marked; Enter picks, Esc leaves it as it was.
Names and descriptions come from files: drawn through `plain` (visible text, never markup)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

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
    from peri_cli.extensions.output_styles import OutputStyle


class StylePicker(ModalScreen[str | None]):
    """Dismissed with the picked style's name, or None (Esc)."""

    DEFAULT_CSS = """
    StylePicker { align: center middle; }
    StylePicker > Vertical {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    StylePicker .choice-title { text-style: bold; }
    StylePicker .choice-note { color: $text-muted; padding: 0 0 1 0; }
    StylePicker OptionList { height: auto; border: none; }
    StylePicker .choice-help { color: $text-muted; padding: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Back")]

    def __init__(self, styles: Sequence[OutputStyle], *, session: str, chosen: str) -> None:
        """`session`: the style the session shown froze; `chosen`: the one settings name."""
        super().__init__()
        self.listed = list(styles)
        self.session = session.casefold()
        self.chosen = chosen.casefold()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Output style for new sessions", classes="choice-title")
            yield Label("This session keeps its own: its prompt is frozen.", classes="choice-note")
            yield OptionList(*(self._option(s) for s in self.listed), id="style-list")
            yield Label("Enter choose · ↑↓ move · Esc back", classes="choice-help")

    def _option(self, style: OutputStyle) -> Option:
        marks = []
        if style.name.casefold() == self.session:
            marks.append("this session")
        if style.name.casefold() == self.chosen:
            marks.append("new sessions")
        line = Content.assemble(
            plain(one_line(style.name, 40), "bold"),
            plain("  " + one_line(style.source, 40), "$text-muted"),
            Content.styled(f"  ({', '.join(marks)})" if marks else "", "$accent"),
            plain("\n  " + one_line(style.description or "(no description)", 100), "$text-muted"),
        )
        return Option(line, id=style.name)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """The list scrolls in what the box (90% of the screen) leaves beside its border, the
        title, the note and the help, so those always have their rows."""
        room = int(self.size.height * 0.9) - 2 - 3 - 2
        self.query_one(OptionList).styles.max_height = max(4, room)

    def on_mount(self) -> None:
        self._fit()
        listing = self.query_one(OptionList)
        names = [s.name.casefold() for s in self.listed]
        listing.highlighted = names.index(self.chosen) if self.chosen in names else 0
        listing.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
