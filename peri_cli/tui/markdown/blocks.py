"""Markdown source to `Block`s: markdown-it's tokens folded into a tree, inline runs as styled
`Content`; nothing dropped (what lies deeper than MAX_NESTING follows as plain text)."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.content import Content, Span
from textual.strip import Strip
from textual.style import Style

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

BULLETS = ["• ", "▪ ", "‣ ", "⭑ ", "◦ "]  # Textual's Markdown.BULLETS, by depth
MAX_NESTING = 100  # block levels parsed; what lies deeper is shown as plain text
_NEWLINE = re.compile(r"\r\n?|\n")  # what markdown-it counts as a line break


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
    open: bool = False  # the last block of a reply still streaming (a fence: drawn plain)


_parser: MarkdownIt | None = None
_parser_lock = threading.Lock()


def _markdown_it() -> MarkdownIt:
    global _parser
    with _parser_lock:
        if _parser is None:
            from markdown_it import MarkdownIt  # imported on first use: not needed to start

            # as Textual's Markdown, but deeper: its 20 levels stop the parse at a list nested
            # ten deep (a list level costs two), and markdown-it then drops the rest silently
            _parser = MarkdownIt("gfm-like", {"maxNesting": MAX_NESTING})
        return _parser


def warm() -> None:
    """Build the parser on a thread while the model thinks: importing markdown-it and compiling
    its rules (~75 ms) otherwise stalls the frame of the first reply, keys waiting behind it."""
    if _parser is None:
        threading.Thread(target=_markdown_it, name="peri-markdown", daemon=True).start()


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
