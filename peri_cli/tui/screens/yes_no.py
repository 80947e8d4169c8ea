"""A modal yes/no question about something the repository asks for (trusting a folder, starting a
project's MCP server): a scrollable body, two numbered choices, and Esc to decide later. The
choices and the help line are always on screen: the body takes the rows they leave and scrolls
(PgUp/PgDn, Home/End), saying so when it goes on.

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
    /* The choices and the help are docked under the body, so they always have their rows; the
       body takes what the box (at most 90% of the screen) leaves, and scrolls. */
    YesNoScreen VerticalScroll { height: auto; max-height: 100%; scrollbar-size-vertical: 1; }
    YesNoScreen .footer { dock: bottom; height: auto; }
    YesNoScreen .hint { color: $warning; text-style: italic; }
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
        Binding("pageup", "page(-1)", "Scroll up", show=False),
        Binding("pagedown", "page(1)", "Scroll down", show=False),
        Binding("home", "edge(False)", show=False),
        Binding("end", "edge(True)", show=False),
    ]
    CHOICES: ClassVar[Choices] = []
    # The choice selected when the question opens (what Enter alone answers).
    START: ClassVar[int] = 0
    ID = "question"  # the ids of the parts: <ID>-body, <ID>-choices, <ID>-help
    ESC_MEANS: str = "Esc decides later (asked again next time)"  # the help line's end

    selected = reactive(0)

    def __init__(self) -> None:
        super().__init__()
        self.set_reactive(YesNoScreen.selected, self.START)

    def body(self) -> Text:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll(id=f"{self.ID}-scroll"):
                yield Static(self.body(), id=f"{self.ID}-body")
            with Vertical(classes="footer"):
                hint = Static("", id=f"{self.ID}-hint", classes="hint")
                hint.display = False
                yield hint
                yield Static(self._choices(), id=f"{self.ID}-choices", classes="choices")
                yield Static(
                    Text(f"↑↓ Enter, or 1 / 2 (y / n); {self.ESC_MEANS}"),
                    id=f"{self.ID}-help",
                    classes="help",
                )

    def on_mount(self) -> None:
        # The hint follows the scroll position, the body's length (wrapping) and the screen's size.
        scroll = self._scroll()
        self.watch(scroll, "scroll_y", self._update_hint, init=False)
        self.watch(scroll, "virtual_size", self._update_hint, init=False)

    def on_resize(self) -> None:
        self.call_after_refresh(self._update_hint)

    def _scroll(self) -> VerticalScroll:
        return self.query_one(f"#{self.ID}-scroll", VerticalScroll)

    def _update_hint(self) -> None:
        """Say that the body goes on when it is taller than its room (as the approval does)."""
        body = self._scroll()
        hint = self.query_one(f"#{self.ID}-hint", Static)
        overflow = body.max_scroll_y > 0
        if overflow:
            where = "more below"
            if body.scroll_y >= body.max_scroll_y:
                where = "more above"
            elif body.scroll_y > 0:
                where = "more above and below"
            lines = body.virtual_size.height
            hint.update(Text(f"{lines} lines · PgUp/PgDn · {where}"))
        hint.display = overflow

    def action_page(self, pages: int) -> None:
        body = self._scroll()
        step = max(1, body.scrollable_content_region.height - 1)
        body.scroll_to(y=body.scroll_y + pages * step, animate=False)

    def action_edge(self, end: bool) -> None:
        body = self._scroll()
        body.scroll_to(y=body.max_scroll_y if end else 0, animate=False)

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
