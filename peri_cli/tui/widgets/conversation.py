"""The scrolling conversation. On resume only the newest items are mounted (a screenful before the
first paint, the rest of the page right after it); older ones load on demand in pages, so a long
session opens fast and stays smooth.

It follows the bottom while output streams, unless the reader scrolled away: then new output
shows a "↓ new output" hint instead of moving the view (Ctrl+End, or sending a prompt, returns
to the bottom and follows again)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from peri_cli.tui.widgets.load_earlier import LoadEarlier

if TYPE_CHECKING:
    from peri_cli.tui.items import Item
    from peri_cli.tui.tool_text import ToolLook

PAGE = 50
FIRST_PAINT = 12  # newest items mounted before the first paint: more than a screenful


def widgets_for_items(items: list[Item], look: ToolLook | None = None) -> list[Widget]:
    # imported on first use: the empty shell draws without the message widgets
    from peri_cli.tui.tool_text import NO_LOOK
    from peri_cli.tui.widgets.views import widgets_for

    look = look or NO_LOOK
    return [w for item in items for w in widgets_for(item, look)]


class NewOutputHint(Static):
    """Shown over the bottom edge while output arrives below where the reader is."""

    DEFAULT_CSS = """
    NewOutputHint {
        dock: bottom;
        width: auto;
        padding: 0 1;
        margin: 0 0 0 2;
        background: $accent;
        color: $text;
        text-style: bold;
    }
    """

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if isinstance(self.parent, Conversation):
            self.parent.to_bottom()


class Conversation(VerticalScroll, can_focus=False):
    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 1 1;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(
        self, *, page: int = PAGE, id: str | None = None, look: ToolLook | None = None
    ) -> None:
        super().__init__(id=id)
        self.page = page
        self.look = look  # how tool calls are shown (paths relative to the workspace)
        self._hidden: list[Item] = []  # older items not mounted yet, oldest first
        self._shown_at = 0  # bumped by each show_items: a pending fill of an older one stops
        self._mounting = asyncio.Lock()  # older items are mounted one batch at a time
        self._load_earlier = LoadEarlier()
        self._load_earlier.display = False
        self.hint = NewOutputHint("↓ new output · Ctrl+End")
        self.hint.display = False

    def compose(self) -> ComposeResult:
        yield self.hint
        yield self._load_earlier

    # following the bottom

    @property
    def following(self) -> bool:
        """The view sticks to the bottom as content grows (the reader has not scrolled away).
        (Textual's anchor: set by `anchor()`, released by any scroll the reader makes, taken up
        again when they scroll back to the bottom.)"""
        return self.is_anchored and not self._anchor_released

    def toggle_folds(self) -> None:
        """Expand every fold on screen, or fold them all if all are open (Ctrl+O)."""
        from peri_cli.tui.widgets.fold import Fold

        folds = list(self.query(Fold))
        expand = any(f.collapsed for f in folds)
        for fold in folds:
            fold.collapsed = not expand

    def to_bottom(self) -> None:
        """Back to the newest output, following it again."""
        self.anchor()
        self.hint.display = False

    def note_output(self) -> None:
        """Something new was drawn: if the reader is elsewhere, tell them."""
        if not self.following and self.max_scroll_y > 0:
            self.hint.display = True

    def _content(self) -> list[Widget]:
        return [w for w in self.children if w is not self._load_earlier and w is not self.hint]

    async def clear_screen(self, *keep: Widget) -> None:
        """Remove everything shown (what was hidden too), then show `keep`."""
        await self.remove_children(self._content())
        self._hidden = []
        self._shown_at += 1
        self._update_load_earlier()
        if keep:
            await self.mount_all(keep)
        self.to_bottom()

    def on_mount(self) -> None:
        self.anchor()

    @property
    def hidden_count(self) -> int:
        return len(self._hidden)

    async def show_items(self, items: list[Item]) -> None:
        """Replace the conversation with these items, mounting only the newest page: the newest
        few now, the rest of the page after the next paint."""
        await self.remove_children(self._content())
        first = min(self.page, FIRST_PAINT)
        self._hidden = list(items[:-first] if len(items) > first else [])
        shown = items[len(self._hidden) :]
        widgets = widgets_for_items(shown, self.look)
        if widgets:
            await self.mount_all(widgets)
        self._update_load_earlier()
        self.to_bottom()
        self._shown_at += 1
        if self._hidden and self.page > first:
            shown_at, more = self._shown_at, self.page - first
            self.call_after_refresh(self._fill, shown_at, more)

    def _fill(self, shown_at: int, count: int) -> None:
        if shown_at == self._shown_at:
            self.run_worker(self._mount_older(count, shown_at), group="fill")

    async def _mount_older(self, count: int, shown_at: int) -> None:
        """Mount `count` more of the hidden items above the shown ones; the view stays put."""
        async with self._mounting:
            if shown_at != self._shown_at or not self._hidden:
                return
            batch, self._hidden = self._hidden[-count:], self._hidden[:-count]
            widgets = widgets_for_items(batch, self.look)
            await self.mount_all(widgets, after=self._load_earlier)
            self._update_load_earlier()

    async def load_earlier(self) -> None:
        """Mount the previous page above what is shown, keeping the view where it was."""
        async with self._mounting:
            if not self._hidden:
                return
            batch, self._hidden = self._hidden[-self.page :], self._hidden[: -self.page]
            widgets = widgets_for_items(batch, self.look)
            first = next(iter(self._content()), None)
            self.release_anchor()
            await self.mount_all(widgets, after=self._load_earlier)
            self._update_load_earlier()
            if first is not None:
                self.call_after_refresh(self.scroll_to_widget, first, top=True, animate=False)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.hint.display and self.following:
            self.hint.display = False
        # the reader scrolled to the top (not a layout that left nothing to scroll): fetch more
        if new <= 0 < old and self._hidden and self.max_scroll_y > 0:
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
