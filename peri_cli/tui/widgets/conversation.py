"""The scrolling conversation. On resume only the newest items are mounted; older ones load on
demand in pages, so a long session opens fast and stays smooth."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget

from peri_cli.tui.items import (
    AssistantItem,
    Item,
    SeparatorItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.folded_text import FoldedText
from peri_cli.tui.widgets.load_earlier import LoadEarlier
from peri_cli.tui.widgets.separator import Separator
from peri_cli.tui.widgets.tool_call import ToolCallView
from peri_cli.tui.widgets.user_message import UserMessage

PAGE = 50


def widgets_for(item: Item) -> list[Widget]:
    match item:
        case UserItem(text=text):
            return [UserMessage(text)]
        case AssistantItem(text=text, thinking=thinking):
            out: list[Widget] = []
            if thinking.strip():
                out.append(FoldedText("Thinking", thinking, classes="-thinking"))
            if text.strip():
                out.append(AssistantMessage(text))
            return out
        case ToolItem():
            view = ToolCallView(item.id, item.name, item.input)
            if item.output is not None:
                view.set_result(item.output, item.is_error)
            else:
                view.set_state("cancelled")
            return [view]
        case SeparatorItem():
            return [
                Separator(
                    item.strategy, item.tokens_before, item.tokens_after, item.affected, item.detail
                )
            ]
        case SummaryItem(title=title, text=text):
            return [FoldedText(title, text)]
    return []


class Conversation(VerticalScroll, can_focus=False):
    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 1 1;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, *, page: int = PAGE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.page = page
        self._hidden: list[Item] = []  # older items not mounted yet, oldest first
        self._load_earlier = LoadEarlier()
        self._load_earlier.display = False

    def compose(self) -> ComposeResult:
        yield self._load_earlier

    def on_mount(self) -> None:
        self.anchor()

    @property
    def hidden_count(self) -> int:
        return len(self._hidden)

    async def show_items(self, items: list[Item]) -> None:
        """Replace the conversation with these items, mounting only the newest page."""
        await self.remove_children([w for w in self.children if w is not self._load_earlier])
        self._hidden = list(items[: -self.page] if len(items) > self.page else [])
        shown = items[len(self._hidden) :]
        widgets = [w for item in shown for w in widgets_for(item)]
        if widgets:
            await self.mount_all(widgets)
        self._update_load_earlier()
        self.anchor()

    async def load_earlier(self) -> None:
        """Mount the previous page above what is shown, keeping the view where it was."""
        if not self._hidden:
            return
        batch, self._hidden = self._hidden[-self.page :], self._hidden[: -self.page]
        widgets = [w for item in batch for w in widgets_for(item)]
        first = next((w for w in self.children if w is not self._load_earlier), None)
        self.release_anchor()
        await self.mount_all(widgets, after=self._load_earlier)
        self._update_load_earlier()
        if first is not None:
            self.call_after_refresh(self.scroll_to_widget, first, top=True, animate=False)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old and self._hidden:  # the reader scrolled to the top: fetch more
            self.run_worker(self.load_earlier(), exclusive=True, group="load-earlier")

    def _update_load_earlier(self) -> None:
        self._load_earlier.display = bool(self._hidden)
        if self._hidden:
            self._load_earlier.set_hidden_count(len(self._hidden))

    @property
    def overgrown(self) -> bool:
        """Many more widgets than a page, and the reader is at the bottom (not reading back)."""
        near_bottom = self.max_scroll_y - self.scroll_y <= max(self.size.height, 1)
        return len(self.children) > 4 * self.page and near_bottom

    async def add(self, widget: Widget) -> Widget:
        await self.mount(widget)
        return widget

    def on_load_earlier_pressed(self, event: LoadEarlier.Pressed) -> None:
        event.stop()
        self.run_worker(self.load_earlier(), exclusive=True, group="load-earlier")
