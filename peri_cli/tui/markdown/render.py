"""`Block`s to strips of exactly a given width, margins collapsed as Textual's Markdown CSS
collapses them, on the owning widget's styles (so the theme's colors apply)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions

from peri_cli.tui.markdown.blocks import Block
from peri_cli.tui.markdown.highlight import highlight

_RULES: dict[str, RulesMap] = {
    "wrap": RulesMap(text_wrap="wrap", text_overflow="fold"),
    "center": RulesMap(text_wrap="wrap", text_overflow="fold", text_align="center"),
    "nowrap": RulesMap(text_wrap="nowrap", text_overflow="fold"),
}

GetStyle = Callable[[str | Style], Style]
_PLAIN_LINES: dict[tuple[str, int, Style], list[Strip]] = {}  # open fences' lines, oldest first
_PLAIN_KEPT = 1024


class Renderer:
    """Renders blocks to strips of exactly `width` cells on a base style.

    `get_style` resolves the component classes (`.md--h1`, `.md--code` ...) and theme variables
    the way the owning widget does, so the theme's colors apply.
    """

    def __init__(self, base: Style, get_style: GetStyle, *, ansi: bool = False, dark: bool = True):
        self.base = base
        self.get_style = get_style
        self.ansi = ansi
        self.dark = dark
        self._options = {name: RenderOptions(get_style, rules) for name, rules in _RULES.items()}

    # -- the document

    def document(
        self, blocks: Sequence[Block], width: int, previous: Block | None = None
    ) -> list[Strip]:
        """Top-level blocks, without the bottom margin of the last one. `previous` is the block
        shown just above these (in another widget): its bottom margin collapses with the first
        one's top margin, as if they were in one document."""
        out: list[Strip] = []
        blank = Strip.blank(width, self.base.background_style.rich_style)
        previous_bottom = None if previous is None else self.margins(previous)[1]
        for block in blocks:
            top, bottom = self.margins(block)
            gap = top if previous_bottom is None else max(previous_bottom, top)
            out.extend([blank] * gap)
            out.extend(self.cached(block, width))
            previous_bottom = bottom
        return out

    def cached(self, block: Block, width: int) -> list[Strip]:
        key = (width, self.base, self.ansi, self.dark)
        if block.cache is not None and block.cache[0] == key:
            return block.cache[1]
        strips = self.block(block, width, self.base, in_list=False)
        block.cache = (key, strips)
        return strips

    def margins(
        self, block: Block, *, top_level: bool = True, in_list: bool = False
    ) -> tuple[int, int]:
        """(top, bottom) margins as Textual's Markdown CSS gives them; adjacent ones collapse."""
        kind = block.kind
        if kind == "paragraph":
            return (0, 1) if top_level else (0, 0)
        if kind == "heading":
            return (2, 1) if block.level <= 2 else (1, 1)
        if kind in ("bullet_list", "ordered_list"):
            return (0, 0) if in_list else (0, 1)
        if kind == "fence":
            return (0, 0) if self.ansi else (1, 1)
        if kind == "quote":
            return (1, 1)
        if kind == "rule":
            return (0, 1)
        if kind == "table":
            return (0, 1)
        return (0, 0)

    def stack(
        self, blocks: Sequence[Block], width: int, base: Style, *, in_list: bool
    ) -> list[Strip]:
        """Nested blocks (in a list item or a quote): every margin kept, adjacent ones collapsed."""
        out: list[Strip] = []
        blank = Strip.blank(width, base.background_style.rich_style)
        previous_bottom = 0
        for i, block in enumerate(blocks):
            top, bottom = self.margins(block, top_level=False, in_list=in_list)
            gap = top if i == 0 else max(previous_bottom, top)
            out.extend([blank] * gap)
            out.extend(self.block(block, width, base, in_list=in_list))
            previous_bottom = bottom
        out.extend([blank] * previous_bottom)
        return out

    def block(self, block: Block, width: int, base: Style, *, in_list: bool) -> list[Strip]:
        width = max(1, width)
        kind = block.kind
        if kind == "paragraph":
            return self.text(block.content, width, base)
        if kind == "heading":
            return self.heading(block, width, base)
        if kind in ("bullet_list", "ordered_list"):
            return self.bullets(block, width, base)
        if kind == "fence":
            return self.fence(block, width, base)
        if kind == "quote":
            return self.quote(block, width, base, in_list=in_list)
        if kind == "rule":  # Textual's: a bottom border under a line of top padding
            style = base + self.get_style(".md--rule")
            blank = Strip.blank(width, base.background_style.rich_style)
            return [blank, Strip([Segment("─" * width, style.rich_style)], width)]
        if kind == "table":
            return self.table(block, width, base)
        return []

    # -- the kinds of block

    def text(
        self, content: Content, width: int, style: Style, options: str = "wrap"
    ) -> list[Strip]:
        strips = content.render_strips(width, None, style, self._options[options])
        pad = style.background_style.rich_style
        return [strip.adjust_cell_length(width, pad) for strip in strips] or [
            Strip.blank(width, pad)
        ]

    def heading(self, block: Block, width: int, base: Style) -> list[Strip]:
        style = base + self.get_style(f".md--h{min(max(block.level, 1), 6)}")
        options = "center" if block.level == 1 else "wrap"
        if block.level == 3:  # Textual's H3 is `width: auto`: its background ends with the text
            text_width = min(width, max(1, block.content.cell_length))
            strips = self.text(block.content, text_width, style)
            pad = base.background_style.rich_style
            return [strip.adjust_cell_length(width, pad) for strip in strips]
        return self.text(block.content, width, style, options)

    def bullets(self, block: Block, width: int, base: Style) -> list[Strip]:
        items = [b for b in block.children if b.kind == "item"]
        if not items:
            return []
        if block.kind == "ordered_list":
            first = items[0].bullet
            start = int(first) if first.isdigit() else 1
            numbers = [f"{n}. " for n in range(start, start + len(items))]
            size = max(len(n) for n in numbers)
            symbols = [n.rjust(size + 1) for n in numbers]
        else:
            symbols = [item.bullet for item in items]
        bullet_style = (base + self.get_style(".md--bullet")).rich_style
        fill = base.background_style.rich_style
        out: list[Strip] = []
        for item, symbol in zip(items, symbols, strict=True):
            symbol_width = cell_len(symbol)
            inner_width = max(1, width - symbol_width)
            lines = self.stack(item.children, inner_width, base, in_list=True) or [
                Strip.blank(inner_width, fill)
            ]
            bullet = Strip([Segment(symbol, bullet_style)], symbol_width)
            gutter = Strip.blank(symbol_width, fill)
            for i, line in enumerate(lines):
                out.append(Strip.join([bullet if i == 0 else gutter, line]))
        return out

    def fence(self, block: Block, width: int, base: Style) -> list[Strip]:
        """Highlighted code on its own background. Long lines fold at the edge (Textual's fence
        scrolls sideways instead; lines drawn into a leaf widget cannot). A fence still
        streaming (`open`) is drawn plain, line by line, each line drawn once (re-highlighting
        the whole of it for every frame of its growth costs frames)."""
        style = base + self.get_style(".md--fence")
        pad_x = 0 if self.ansi else 2
        inner = max(1, width - 2 * pad_x)
        fill = style.background_style.rich_style
        side = Strip.blank(pad_x, fill)
        blank = Strip.blank(width, fill)
        if block.open:
            code_lines = [
                s for line in block.code.split("\n") for s in self._plain(line, inner, style)
            ]
        else:
            code = highlight(block.code, block.lexer, ansi=self.ansi, dark=self.dark)
            code_lines = self.text(code, inner, style, "nowrap")
        lines = [Strip.join([side, line, side]) for line in code_lines]
        return [blank, *lines, blank]

    def _plain(self, line: str, width: int, style: Style) -> list[Strip]:
        """One line of an open fence, unhighlighted; memoized (the fence is drawn again as it
        grows, its lines stay the same)."""
        key = (line, width, style)
        hit = _PLAIN_LINES.get(key)
        if hit is None:
            hit = _PLAIN_LINES[key] = self.text(Content(line), width, style, "nowrap")
            if len(_PLAIN_LINES) > _PLAIN_KEPT:
                del _PLAIN_LINES[next(iter(_PLAIN_LINES))]
        return hit

    def quote(self, block: Block, width: int, base: Style, *, in_list: bool) -> list[Strip]:
        style = base + self.get_style(".md--quote")
        border = (style + self.get_style(".md--quote-border")).rich_style
        fill = style.background_style.rich_style
        inner = max(1, width - 3)
        lines = self.stack(block.children, inner, style, in_list=in_list) or [
            Strip.blank(inner, fill)
        ]
        edge = Strip([Segment("▌", border)], 1)
        pad = Strip.blank(1, fill)
        return [Strip.join([edge, pad, line, pad]) for line in lines]

    def table(self, block: Block, width: int, base: Style) -> list[Strip]:
        rows = [row for row in block.rows if row]
        if not rows:
            return []
        columns = max(len(row) for row in rows)
        rows = [row + [Content("")] * (columns - len(row)) for row in rows]
        natural = [max(row[c].cell_length for row in rows) + 2 for c in range(columns)]
        room = width - (columns + 1)  # keylines between and around the cells
        widths = _fit(natural, room)
        line_style = (base + self.get_style(".md--table-border")).rich_style
        header_style = base + self.get_style(".md--table-header")
        fill = base.background_style.rich_style

        def rule(left: str, middle: str, right: str) -> Strip:
            text = left + middle.join("─" * w for w in widths) + right
            return Strip([Segment(text, line_style)]).adjust_cell_length(width, fill)

        bar = Strip([Segment("│", line_style)], 1)
        out = [rule("┌", "┬", "┐")]
        for r, row in enumerate(rows):
            style = header_style if r == 0 else base
            cells = [
                self.text(cell, max(1, w - 2), style) for cell, w in zip(row, widths, strict=True)
            ]
            height = max(len(c) for c in cells)
            for y in range(height):
                parts: list[Strip] = [bar]
                for cell, w in zip(cells, widths, strict=True):
                    line = cell[y] if y < len(cell) else Strip.blank(max(1, w - 2), fill)
                    parts += [Strip.blank(1, fill), line, Strip.blank(1, fill), bar]
                out.append(Strip.join(parts).adjust_cell_length(width, fill))
            out.append(rule("├", "┼", "┤") if r < len(rows) - 1 else rule("└", "┴", "┘"))
        return out


def _fit(natural: list[int], room: int) -> list[int]:
    """Column widths filling `room`, in proportion to their text's (Textual's table expands)."""
    total = sum(natural)
    if room < 3 * len(natural) or total <= 0:
        return [3] * len(natural)
    shares = [w * room / total for w in natural]
    widths = [max(3, int(share)) for share in shares]
    by_fraction = sorted(range(len(shares)), key=lambda i: int(shares[i]) - shares[i])
    for i in by_fraction[: max(0, room - sum(widths))]:
        widths[i] += 1
    while sum(widths) > room:  # the 3-cell minimums took more than their share
        widest = max(range(len(widths)), key=widths.__getitem__)
        widths[widest] -= 1
    return widths
