"""The multi-line prompt: Enter sends, Shift+Enter (or Ctrl+J, Alt+Enter) adds a line break."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.cells import cell_len
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j", "alt+enter", "ctrl+enter"})
PLACEHOLDER = "Message Peri · / for commands · @ for files · Shift+Enter or Ctrl+J for a new line"
MENU_KEYS = frozenset({"up", "down", "tab", "enter", "escape"})


def fitted(text: str, width: int) -> str:
    """`text`'s leading " · " pieces that fit in `width` cells, whole (never cut mid-word)."""
    pieces = text.split(" · ")
    while len(pieces) > 1 and cell_len(" · ".join(pieces)) > width:
        pieces.pop()
    return " · ".join(pieces)


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $primary 60%;
        padding: 0 1;
        background: $surface;
    }
    PromptInput:focus { border: round $primary; }
    PromptInput .text-area--cursor-line { background: transparent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Send", show=True, key_display="Enter"),
        Binding("shift+enter", "newline", "Newline", show=True, key_display="Shift+Enter"),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class History(Message):
        """Up on the first line (-1) or Down on the last line (+1)."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    class MenuKey(Message):
        """A key meant for the completion menu while it is open."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None, placeholder: str = PLACEHOLDER) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder=placeholder,
            highlight_cursor_line=False,
        )
        self.menu_open = False
        self._full_placeholder = placeholder
        # What a paste becomes (an image's `[image #N]` tag), or None to paste it as text.
        self.paste_filter: Callable[[str], str | None] = lambda _text: None

    def on_resize(self, event: events.Resize) -> None:
        self.placeholder = fitted(self._full_placeholder, self.content_size.width)

    def invite(self, placeholder: str) -> None:
        """Show `placeholder` (as much of it as fits whole) while nothing is typed."""
        self._full_placeholder = placeholder
        self.placeholder = fitted(placeholder, self.content_size.width or len(placeholder))

    def on_mount(self) -> None:
        if self.app.is_headless:
            self.cursor_blink = False  # tests and screenshots see the same frame every time

    async def _on_paste(self, event: events.Paste) -> None:
        # Textual runs every class's `_on_paste` along the MRO unless one prevents the default:
        # TextArea's own pastes the text after this one returns (calling it here as well pasted
        # everything twice). Stopped here, it never bubbles up to be pasted again.
        event.stop()
        replacement = self.paste_filter(event.text)
        if replacement is None or self.read_only:
            return
        event.prevent_default()
        result = self.replace(replacement, *self.selection, maintain_selection_offset=False)
        self.move_cursor(result.end_location)

    def action_submit(self) -> None:
        self.post_message(self.Submitted(self.text))

    def action_newline(self) -> None:
        self.insert("\n")

    def set_prompt(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        handled = True
        if self.menu_open and key in MENU_KEYS:
            self.post_message(self.MenuKey(key))
        elif key == "enter":
            self.action_submit()
        elif key in NEWLINE_KEYS:
            self.action_newline()
        elif key == "up" and self.cursor_location[0] == 0 and not self.selected_text:
            self.post_message(self.History(-1))
        elif (
            key == "down"
            and self.cursor_location[0] == self.document.line_count - 1
            and not self.selected_text
        ):
            self.post_message(self.History(1))
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)
