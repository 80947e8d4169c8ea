"""The control at the top of a long conversation that mounts older messages on demand."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Static


class LoadEarlier(Static, can_focus=True):
    DEFAULT_CSS = """
    LoadEarlier {
        width: 100%;
        content-align: center middle;
        color: $accent;
        background: $boost;
    }
    LoadEarlier:hover, LoadEarlier:focus { background: $accent 30%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [("enter", "load", "Load earlier")]

    class Pressed(Message):
        pass

    def set_hidden_count(self, count: int) -> None:
        self.update(
            f"▲ {count} earlier item{'s' if count != 1 else ''} — click or press Enter to load"
        )

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Pressed())

    def action_load(self) -> None:
        self.post_message(self.Pressed())
