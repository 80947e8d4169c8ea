"""Some blocks of a reply's Markdown in one leaf widget, drawn as lines (`tui/markdown/`)
with the look of Textual's `Markdown`: however many blocks, it costs layout one widget, and a
frame only touches the lines on screen (the Line API: `render_line`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from peri_cli.tui.markdown.blocks import Block
from peri_cli.tui.markdown.render import Renderer


class MarkdownChunk(Widget):
    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "md--code",
        "md--em",
        "md--strong",
        "md--s",
        "md--h1",
        "md--h2",
        "md--h3",
        "md--h4",
        "md--h5",
        "md--h6",
        "md--bullet",
        "md--fence",
        "md--quote",
        "md--quote-border",
        "md--rule",
        "md--table-border",
        "md--table-header",
    }
    # The values of Textual's Markdown widgets' DEFAULT_CSS, as component classes.
    DEFAULT_CSS = """
    MarkdownChunk {
        width: 1fr;
        height: auto;
        &:dark > .md--code { background: $warning 10%; color: $text-warning 95%; }
        &:light > .md--code { background: $error 5%; color: $text-error 95%; }
        &:ansi > .md--code { background: ansi_default; }
        & > .md--em { text-style: italic; }
        & > .md--strong { text-style: bold; }
        & > .md--s { text-style: strike; }
        & > .md--h1 {
            color: $markdown-h1-color;
            background: $markdown-h1-background;
            text-style: $markdown-h1-text-style;
        }
        & > .md--h2 {
            color: $markdown-h2-color;
            background: $markdown-h2-background;
            text-style: $markdown-h2-text-style;
        }
        & > .md--h3 {
            color: $markdown-h3-color;
            background: $markdown-h3-background;
            text-style: $markdown-h3-text-style;
        }
        & > .md--h4 {
            color: $markdown-h4-color;
            background: $markdown-h4-background;
            text-style: $markdown-h4-text-style;
        }
        & > .md--h5 {
            color: $markdown-h5-color;
            background: $markdown-h5-background;
            text-style: $markdown-h5-text-style;
        }
        & > .md--h6 {
            color: $markdown-h6-color;
            background: $markdown-h6-background;
            text-style: $markdown-h6-text-style;
        }
        & > .md--bullet { color: $text-primary; }
        &:light > .md--bullet { color: $text-secondary; }
        & > .md--fence { color: rgb(210,210,210); background: black 10%; }
        &:light > .md--fence { background: white 30%; }
        &:ansi > .md--fence { background: transparent; }
        & > .md--quote { background: $boost; }
        & > .md--quote-border { color: $text-primary 50%; }
        &:light > .md--quote-border { color: $text-secondary; }
        & > .md--rule { color: $secondary; }
        & > .md--table-border { color: $foreground 20%; }
        & > .md--table-header { color: $primary; }
    }
    """

    def __init__(self, blocks: Sequence[Block] = (), *, previous: Block | None = None) -> None:
        super().__init__()
        self.blocks: list[Block] = list(blocks)
        self.previous = previous  # the block shown just above this widget, if any
        self._lines: tuple[object, list[Strip]] | None = None

    def show(self, blocks: Sequence[Block]) -> None:
        """Draw these blocks instead (a SubAgent's report once it arrives)."""
        self.blocks = list(blocks)
        self._lines = None
        self.refresh(layout=True)

    def lines(self, width: int) -> list[Strip]:
        """All the lines at this width (each block's are drawn once and kept)."""
        style = self.visual_style
        key = (width, style)
        if self._lines is None or self._lines[0] != key:
            self._lines = (key, self._renderer().document(self.blocks, width, self.previous))
        return self._lines[1]

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self.lines(width)
        if y < len(lines):
            return lines[y]
        return Strip.blank(width, self.visual_style.rich_style)

    def draw_ahead(self, block: Block) -> bool:
        """Draw a block another chunk of the same reply will show, at this one's width: its
        lines are kept (`Block.cache`), so that chunk's layout finds them drawn. False: this
        one has no width yet (not laid out)."""
        width = self.size.width
        if width <= 0 or not self.is_attached:
            return False
        self._renderer().cached(block, width)
        return True

    def _renderer(self) -> Renderer:
        app = self.app
        return Renderer(
            self.visual_style,
            self._get_style,
            ansi=app.native_ansi_color,
            dark=app.current_theme.dark,
        )

    def set_blocks(self, blocks: Sequence[Block], *, previous: Block | None = None) -> None:
        self.blocks = list(blocks)
        self.previous = previous
        self._lines = None
        self.refresh(layout=True)

    def extend(self, blocks: Sequence[Block]) -> None:
        """Add blocks after the shown ones (their lines are drawn once and kept)."""
        self.blocks.extend(blocks)
        self._lines = None
        self.refresh(layout=True)

    def notify_style_update(self) -> None:
        for block in self.blocks:  # the theme or the CSS changed: draw again
            block.cache = None
        self._lines = None
        super().notify_style_update()

    def action_link(self, href: str) -> None:
        self.app.open_url(href)
