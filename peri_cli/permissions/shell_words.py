"""Words of a shell command as bash would pass them: quotes removed, escapes undone, ANSI-C
`$'..'` decoded, and whether the value is exact (nothing in it expands when the command runs).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_ANSI_C = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})"
    r"|U([0-9A-Fa-f]{1,8})|c(.))",
    re.DOTALL,
)
_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
# Leaves whose text is their value: numbers, `[[`'s operators, keywords (`export`, `==`).
_LITERAL = frozenset({"number", "test_operator", "file_descriptor", "variable_name"})


@dataclass(frozen=True)
class Word:
    """One word after quote removal. `exact`: nothing in it expands (no `$`, backticks, globs,
    braces or `~`), so `value` is exactly what the command receives."""

    value: str
    raw: str
    exact: bool = True

    @property
    def is_assignment(self) -> bool:
        return _ASSIGNMENT.match(self.raw) is not None


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def word_from(nodes: Sequence[Node]) -> Word:
    """The word that touching nodes make (`a"b"$c` is three nodes, one word)."""
    raw = "".join(node_text(n) for n in nodes)
    values: list[str] = []
    exact = True
    for n, node in enumerate(nodes):
        if node.type == "$" and n + 1 < len(nodes) and nodes[n + 1].type == "string":
            exact = False  # $"..." is translated at run time
            continue
        value, piece_exact = _piece(node)
        values.append(value)
        exact = exact and piece_exact
    if raw.startswith("~") or (exact and "{" in raw and _BRACE_EXPANSION.search(raw)):
        exact = False
    return Word("".join(values), raw, exact)


def _piece(node: Node) -> tuple[str, bool]:
    kind = node.type
    text = node_text(node)
    if kind == "word":
        return _unquoted(text)
    if not node.is_named or kind in _LITERAL:
        return text, True
    if kind == "raw_string":
        return text[1:-1], True
    if kind == "ansi_c_string":
        return decode_ansi_c(text[2:-1]), True
    if kind == "string":
        return _double_quoted(node)
    if kind in ("concatenation", "variable_assignment"):
        return _joined(node)
    return text, False  # expansions, substitutions, arrays, brace ranges, patterns


def _joined(node: Node) -> tuple[str, bool]:
    """The pieces of a node in order; text between them (none, normally) read unquoted."""
    source = node.text or b""
    base, pos = node.start_byte, node.start_byte
    values: list[str] = []
    exact = True
    for child in node.children:
        if child.start_byte > pos:
            gap, gap_exact = _unquoted(source[pos - base : child.start_byte - base].decode())
            values.append(gap)
            exact = exact and gap_exact
        value, piece_exact = _piece(child)
        values.append(value)
        exact = exact and piece_exact
        pos = child.end_byte
    return "".join(values), exact


def _unquoted(text: str) -> tuple[str, bool]:
    """An unquoted word: a backslash keeps the next character (a newline after it vanishes);
    `*`, `?` and a `[` closed later are globs."""
    out: list[str] = []
    exact = True
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if c in "*?" or (c == "[" and "]" in text[i + 1 :]):
            exact = False
        out.append(c)
        i += 1
    return "".join(out), exact


def _double_quoted(node: Node) -> tuple[str, bool]:
    """Inside "...": `\\$`, `\\``, `\\"`, `\\\\` are escapes; expansions are not exact."""
    source = node.text or b""
    base = node.start_byte
    children = list(node.children)
    if len(children) < 2 or children[0].type != '"' or children[-1].type != '"':
        return node_text(node), False
    values: list[str] = []
    exact = True
    pos = children[0].end_byte
    for child in [*children[1:-1], children[-1]]:
        literal = source[pos - base : child.start_byte - base].decode("utf-8", "replace")
        values.append(_double_literal(literal))
        if child is children[-1]:
            break
        if child.type == "string_content":
            values.append(_double_literal(node_text(child)))
        else:
            values.append(node_text(child))
            exact = False
        pos = child.end_byte
    return "".join(values), exact


def _double_literal(text: str) -> str:
    text = text.replace("\\\n", "")
    return re.sub(r'\\([$`"\\])', r"\1", text)


def decode_ansi_c(body: str) -> str:
    """The value of `$'body'`: C escapes decoded, cut at a NUL as bash does."""

    def one(m: re.Match[str]) -> str:
        simple, octal, hex2, u4, u8, ctrl = m.groups()
        if simple is not None:
            return _SIMPLE_ESCAPES.get(simple, simple)
        if ctrl is not None:
            return chr(ord(ctrl) & 0x1F)
        number = int(octal, 8) if octal else int(hex2 or u4 or u8, 16)
        return chr(min(number, 0x10FFFF)) if number < 0xD800 or number > 0xDFFF else "\ufffd"

    return _ANSI_C.sub(one, body).split("\x00", 1)[0]
