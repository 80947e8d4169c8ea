"""Markdown as lines, not widgets: a reply is parsed into blocks, and blocks are rendered to strips
at a given width with the look of Textual's `Markdown` widget. One leaf widget can then show any
number of blocks, so layout stays cheap however long a reply or a conversation gets (Textual's
`Markdown` mounts a widget per block, and every layout pass visits them all).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.segment import Segment
from textual.content import Content, Span
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

BULLETS = ["• ", "▪ ", "‣ ", "⭑ ", "◦ "]  # Textual's Markdown.BULLETS, by depth
MAX_NESTING = 100  # block levels parsed; what lies deeper is shown as plain text
_NEWLINE = re.compile(r"\r\n?|\n")  # what markdown-it counts as a line break
_RULES: dict[str, RulesMap] = {
    "wrap": RulesMap(text_wrap="wrap", text_overflow="fold"),
    "center": RulesMap(text_wrap="wrap", text_overflow="fold", text_align="center"),
    "nowrap": RulesMap(text_wrap="nowrap", text_overflow="fold"),
}

GetStyle = Callable[[str | Style], Style]


@dataclass(eq=False)
class Block:
    """One Markdown block; `line` is its first source line as markdown-it maps it."""

    kind: str  # paragraph heading bullet_list ordered_list item fence quote rule table
    line: int = 0
    content: Content = field(default_factory=Content)
    level: int = 0  # heading level
    bullet: str = ""  # list item: its bullet, or the number it was written with
    code: str = ""
    lexer: str = ""
    children: list[Block] = field(default_factory=list)
    rows: list[list[Content]] = field(default_factory=list)  # table: the header row first
    cache: tuple[object, list[Strip]] | None = None  # top-level blocks: strips by (width, style)


# --- parsing ---------------------------------------------------------------------------------

_parser: MarkdownIt | None = None


def _markdown_it() -> MarkdownIt:
    global _parser
    if _parser is None:
        from markdown_it import MarkdownIt  # imported on first use: it is not needed to start

        # as Textual's Markdown, but deeper: its 20 levels stop the parse at a list nested ten
        # deep (a list level costs two), and markdown-it then drops the rest without a word
        _parser = MarkdownIt("gfm-like", {"maxNesting": MAX_NESTING})
    return _parser


_OPENERS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "blockquote_open": "quote",
    "bullet_list_open": "bullet_list",
    "ordered_list_open": "ordered_list",
    "list_item_open": "item",
    "table_open": "table",
    "th_open": "cell",
    "td_open": "cell",
}
_SKIPPED = frozenset({"thead_open", "thead_close", "tbody_open", "tbody_close", "tr_close"})


def parse(source: str) -> list[Block]:
    """The top-level blocks of a Markdown document. Nothing is dropped: what the parser gave up
    on (nesting deeper than MAX_NESTING) follows as plain text."""
    out: list[Block] = []
    stack: list[Block] = []

    def add(block: Block) -> None:
        (stack[-1].children if stack else out).append(block)

    tokens = _markdown_it().parse(source)
    for token in tokens:
        kind = token.type
        line = token.map[0] if token.map else 0
        if kind in _OPENERS:
            stack.append(_opened(_OPENERS[kind], token, line, stack))
        elif kind in _SKIPPED:
            continue
        elif kind == "tr_open" and stack:
            stack[-1].rows.append([])
        elif kind.endswith("_close") and stack:
            block = stack.pop()
            if block.kind != "cell":
                add(block)
            elif stack and stack[-1].rows:
                stack[-1].rows[-1].append(block.content)
        elif kind == "inline" and stack:
            stack[-1].content = inline_content(token)
        elif kind in ("fence", "code_block"):
            add(Block("fence", line, code=token.content.rstrip(), lexer=token.info.strip()))
        elif kind == "hr":
            add(Block("rule", line))
        elif kind == "html_block":  # shown as written (Textual's Markdown drops it)
            add(Block("paragraph", line, content=Content(token.content.rstrip("\n"))))
    rest = _unparsed(source, tokens)
    if rest is not None:
        out.append(Block("paragraph", rest[0], content=Content(rest[1])))
    return out


def _unparsed(source: str, tokens: Sequence[Token]) -> tuple[int, str] | None:
    """(first line, text) of what the parser skipped: when it reaches MAX_NESTING it stops and
    closes every open block over the rest of the source, so the rest is after the last line
    that a leaf block (a paragraph, a heading, a fence...) holds."""
    if not tokens or max(t.level for t in tokens) < MAX_NESTING - 2:
        return None
    end = max((t.map[1] for t in tokens if t.map and not t.type.endswith("_open")), default=0)
    end = max(
        [end] + [t.map[1] for t in tokens if t.map and t.type in ("paragraph_open", "heading_open")]
    )
    offsets = line_offsets(source)
    if end >= len(offsets):
        return None
    text = source[offsets[end] :].strip("\n")
    return (end, text) if text.strip() else None


def _opened(kind: str, token: Token, line: int, stack: list[Block]) -> Block:
    if kind == "heading":
        return Block(kind, line, level=int(token.tag[1:] or 1))
    if kind == "item":  # a bullet by depth, as Textual picks it; or the number as written
        depth = sum(1 for b in stack if b.kind == "item" and not b.bullet[:1].isdigit())
        return Block(kind, line, bullet=token.info or BULLETS[depth % len(BULLETS)])
    return Block(kind, line)


_INLINE_STYLES = {"em_open": ".md--em", "strong_open": ".md--strong", "s_open": ".md--s"}


def inline_content(token: Token) -> Content:
    """Styled text of an inline token, as Textual's `MarkdownBlock._token_to_content`."""
    if token.children is None:
        return Content("")
    parts: list[str] = []
    spans: list[Span] = []
    stack: list[tuple[str | Style, int]] = []
    position = 0

    def add(text: str) -> None:
        nonlocal position
        parts.append(text)
        position += len(text)

    def close() -> None:
        if stack:
            style, start = stack.pop()
            spans.append(Span(start, position, style))

    for child in token.children:
        kind = child.type
        if kind == "text":
            add(re.sub(r"\s+", " ", child.content))
        elif kind == "html_inline":  # shown as written (Textual's Markdown drops it)
            add(child.content)
        elif kind in ("hardbreak", "softbreak"):
            add("\n" if kind == "hardbreak" else " ")
        elif kind == "code_inline":
            stack.append((".md--code", position))
            add(child.content)
            close()
        elif kind in _INLINE_STYLES:
            stack.append((_INLINE_STYLES[kind], position))
        elif kind in ("link_open", "image"):
            href = str(child.attrs.get("href" if kind == "link_open" else "src", ""))
            stack.append((Style.from_meta({"@click": f"link({href!r})"}), position))
            if kind == "image":
                alt = str(child.attrs.get("alt", ""))
                words = "".join(c.content for c in child.children or [])
                add("🖼  " + (f"({alt})" if alt else "") + words)
                close()
        elif kind.endswith("_close"):
            close()
    return Content("".join(parts), spans=spans)


def line_offsets(source: str) -> list[int]:
    """Offsets in `source` where each line starts (line 0 at 0), counting breaks as markdown-it."""
    return [0, *(m.end() for m in _NEWLINE.finditer(source))]


# --- rendering -------------------------------------------------------------------------------


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
        scrolls sideways instead; lines drawn into a leaf widget cannot)."""
        style = base + self.get_style(".md--fence")
        pad_x = 0 if self.ansi else 2
        inner = max(1, width - 2 * pad_x)
        code = highlight(block.code, block.lexer, ansi=self.ansi, dark=self.dark)
        fill = style.background_style.rich_style
        side = Strip.blank(pad_x, fill)
        blank = Strip.blank(width, fill)
        lines = [Strip.join([side, line, side]) for line in self.text(code, inner, style, "nowrap")]
        return [blank, *lines, blank]

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


# --- code highlighting ---------------------------------------------------------------------------

_HIGHLIGHTS: OrderedDict[tuple[str, str, bool, bool], Content] = OrderedDict()
_HIGHLIGHTS_KEPT = 256


def highlight(code: str, lexer: str, *, ansi: bool, dark: bool) -> Content:
    """Code colored as Textual's `MarkdownFence` colors it; memoized, as a streamed reply asks for
    the same fence again and again."""
    key = (code, lexer, ansi, dark)
    hit = _HIGHLIGHTS.get(key)
    if hit is not None:
        _HIGHLIGHTS.move_to_end(key)
        return hit
    from textual.highlight import highlight as textual_highlight  # imports pygments

    theme: Any
    if ansi:
        from textual.highlight import ANSIDarkHighlightTheme, ANSILightHighlightTheme

        theme = ANSIDarkHighlightTheme if dark else ANSILightHighlightTheme
    else:
        from textual.highlight import HighlightTheme

        theme = HighlightTheme
    content = textual_highlight(code, language=lexer or None, theme=theme)
    _HIGHLIGHTS[key] = content
    if len(_HIGHLIGHTS) > _HIGHLIGHTS_KEPT:
        _HIGHLIGHTS.popitem(last=False)
    return content
