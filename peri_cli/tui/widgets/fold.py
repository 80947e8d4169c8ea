"""A one-line title that expands to a body: the light base of tool calls and folded text.

Looks like Textual's `Collapsible` but costs two widgets while folded: the body is built on the
first expand (`build_body`), and folding never restyles a subtree (`Collapsible` toggles a class
on mount, which restyles everything inside it; a resumed page holds dozens of these).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from peri_cli.tui.format import plain


class Fold(Widget):
    DEFAULT_CSS = """
    Fold {
        width: 1fr;
        height: auto;
        layout: vertical;
        &:focus-within { background-tint: $foreground 5%; }
        & > .fold--title {
            width: auto;
            height: auto;
            padding: 0 1;
            text-style: $block-cursor-blurred-text-style;
            color: $block-cursor-blurred-foreground;
            pointer: pointer;
            &:hover { background: $block-hover-background; color: $foreground; }
            &:focus {
                text-style: $block-cursor-text-style;
                background: $block-cursor-background;
                color: $block-cursor-foreground;
            }
        }
        & > .fold--body { width: 100%; height: auto; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_fold", "Toggle", show=False),
    ]

    def __init__(
        self, title: Content | str = "", *, collapsed: bool = True, classes: str | None = None
    ) -> None:
        super().__init__(classes=classes)
        self._title_content = plain(title) if isinstance(title, str) else title
        self._collapsed = collapsed
        self._title = Static(self._label(), classes="fold--title")
        self._title.can_focus = True
        self._body: Vertical | None = None

    def compose(self) -> ComposeResult:
        yield self._title
        if not self._collapsed:
            yield self._make_body()

    def build_body(self) -> list[Widget]:
        """The widgets shown when expanded; called once, on the first expand."""
        return []

    def _make_body(self) -> Vertical:
        self._body = Vertical(*self.build_body(), classes="fold--body")
        return self._body

    @property
    def body(self) -> Vertical | None:
        """The body container, once it has been built."""
        return self._body

    # the title

    @property
    def title(self) -> Content:
        return self._title_content

    @title.setter
    def title(self, title: Content) -> None:
        """Set from pieces (`format.plain` for untrusted text), never from markup."""
        if title != self._title_content:
            self._title_content = title
            self._title.update(self._label())
            if self.is_mounted:
                # The title is `width: auto`: a longer one needs a layout pass, and under load
                # Textual can repaint it at its old size (wrapped: "▶ ◐" and blanks) and let
                # that layout go, so a running call showed no command until it ended. A second
                # layout after the next frame heals the stale size.
                self.call_after_refresh(self._title.refresh, layout=True)

    def _label(self) -> Content:
        symbol = "▶" if self._collapsed else "▼"
        return Content.assemble(symbol, " ", self._title_content)

    # folding

    @property
    def collapsed(self) -> bool:
        return self._collapsed

    @collapsed.setter
    def collapsed(self, collapsed: bool) -> None:
        if collapsed == self._collapsed:
            return
        self._collapsed = collapsed
        self._title.update(self._label())
        if not self.is_mounted:
            return  # compose builds the body if it is expanded by then
        if not collapsed and self._body is None:
            self.mount(self._make_body())
        elif self._body is not None:
            self._body.display = not collapsed
        self.call_after_refresh(self._reveal)

    def _reveal(self) -> None:
        """Bring the fold into view, unless its conversation follows the bottom (then the view
        stays there, and keeps following the output)."""
        following = any(getattr(a, "following", False) for a in self.ancestors)
        if not following and self.is_attached:
            self.scroll_visible(animate=False)

    def action_toggle_fold(self) -> None:
        self.collapsed = not self.collapsed

    def on_click(self, event: events.Click) -> None:
        if event.widget is self._title:
            event.stop()
            self.collapsed = not self.collapsed
