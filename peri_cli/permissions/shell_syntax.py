"""A shell command read with bash's grammar (tree-sitter-bash): which simple commands it runs
and which files it redirects to, so permission rules can judge each part.

`parse` gives every simple command (those inside `$( )`, backticks, `<( )`, here-documents,
subshells, functions, loops and `case` included) with its words decoded (quotes, escapes and
ANSI-C `$'..'` removed) and marked exact or not, and every file redirection. It raises
`ShellParseError`, and the caller judges the command as a whole, when the grammar finds an
error, when the command is too long or too deep, and for arithmetic (`$(( ))`, `(( ))`, array
subscripts): bash evaluates variables there as code (`a[$(cmd)]`), which no reading can follow.

Where the grammar and bash differ it reads more, never less: it ends a here-document at a
line that only starts with the delimiter (`EOF; rm x`), so lines bash takes as data may be
judged as commands too (tests/permissions/test_shell_syntax.py checks such cases against bash).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from peri_cli.permissions.shell_words import Word, node_text, word_from

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "MAX_COMMANDS",
    "MAX_COMMAND_CHARS",
    "MAX_DEPTH",
    "Redirection",
    "ShellParseError",
    "ShellScript",
    "SimpleCommand",
    "Word",
    "parse",
]

MAX_COMMAND_CHARS = 100_000  # longer commands are not read (the caller asks)
MAX_DEPTH = 16  # substitutions nested deeper than this are not read
MAX_COMMANDS = 500  # a script of more simple commands than this is not read
MAX_NODES = 200_000  # a syntax tree larger than this is not read
MAX_TREE_DEPTH = 200  # nor one nested deeper than this (`a && b && ...` nests one per `&&`)

_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_FILE_OPS = _WRITE_OPS | {"<"}
_DUPLICATE = re.compile(r"[0-9]*-?")
_ARITHMETIC = frozenset({"arithmetic_expansion", "c_style_for_statement"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
# Nodes whose own word is not a command: a statement's parts are read below them.
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


class ShellParseError(Exception):
    """The command cannot be read part by part; the message says why."""


@dataclass(frozen=True)
class SimpleCommand:
    """One command the shell runs: leading `NAME=value` assignments, then the command words."""

    words: tuple[Word, ...]
    assignment_count: int = 0

    @property
    def assignments(self) -> tuple[Word, ...]:
        return self.words[: self.assignment_count]

    @property
    def argv(self) -> tuple[Word, ...]:
        """The words after the leading assignments."""
        return self.words[self.assignment_count :]

    @property
    def text(self) -> str:
        return " ".join(w.value for w in self.words)


@dataclass(frozen=True)
class Redirection:
    """A redirection to or from a file (`> f`, `>> f`, `&> f`, `< f`, `<> f`, `>&f`)."""

    op: str
    target: Word

    @property
    def writes(self) -> bool:
        return self.op in _WRITE_OPS

    @property
    def reads(self) -> bool:
        return self.op in ("<", "<>")


@dataclass(frozen=True)
class ShellScript:
    """Every simple command (substitutions included) and every file redirection, in order."""

    commands: tuple[SimpleCommand, ...]
    redirections: tuple[Redirection, ...]
    changes_directory: bool  # `cd`/`pushd`/`popd` run: relative paths no longer mean the workspace


def parse(command: str) -> ShellScript:
    """Read `command`, or raise ShellParseError saying why it cannot be read part by part."""
    found = _parse_cached(command)
    if isinstance(found, str):
        raise ShellParseError(found)
    return found


@functools.lru_cache(maxsize=512)
def _parse_cached(command: str) -> ShellScript | str:
    """One reading per command text: a decision asks for it several times (rules, views)."""
    acc = _Found()
    try:
        _read(command, acc, depth=0)
    except ShellParseError as e:
        return str(e)
    changes = any(_changes_directory(c) for c in acc.commands)
    return ShellScript(tuple(acc.commands), tuple(acc.redirections), changes)


def _changes_directory(command: SimpleCommand) -> bool:
    return any(w.value in ("cd", "pushd", "popd") for w in command.argv[:3])


@functools.cache
def _parser() -> Parser:
    from tree_sitter import Language, Parser
    from tree_sitter_bash import language

    return Parser(Language(language()))


@dataclass
class _Found:
    commands: list[SimpleCommand] = field(default_factory=list)
    redirections: list[Redirection] = field(default_factory=list)


def _read(command: str, acc: _Found, depth: int) -> None:
    """Parse one command text (the whole command, or a backtick substitution's inside)."""
    if depth > MAX_DEPTH:
        raise ShellParseError(f"substitutions nested deeper than {MAX_DEPTH} levels")
    if len(command) > MAX_COMMAND_CHARS:
        raise ShellParseError(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    if "\x00" in command:
        raise ShellParseError("the command contains a NUL byte")
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ShellParseError("the command is not valid text") from e
    root = _parser().parse(source).root_node
    read_write: frozenset[int] = frozenset()
    if root.has_error and b"<>" in source:
        root, read_write = _without_read_write(source, root)
    if root.has_error:
        raise ShellParseError(_error_reason(root))
    if root.descendant_count > MAX_NODES:
        raise ShellParseError(f"the command has more than {MAX_NODES} syntax nodes")
    _Reader(acc, depth, read_write).visit(root, 0)


def _without_read_write(source: bytes, root: Node) -> tuple[Node, frozenset[int]]:
    """The grammar lacks `<>` (open for reading and writing): read it as `>` and remember
    where, when every `<>` then is a redirection's operator (the first tree otherwise)."""
    places = frozenset(m.start() for m in re.finditer(rb"<>", source))
    second = _parser().parse(source.replace(b"<>", b"> ")).root_node
    operators: set[int] = set()
    stack = [second]
    while stack:
        node = stack.pop()
        if node.type == "file_redirect":
            operators.update(c.start_byte for c in node.children if c.type == ">")
        stack.extend(node.children)
    if second.has_error or not places <= operators:
        return root, frozenset()
    return second, places


def _error_reason(root: Node) -> str:
    """Where the grammar stopped reading, for the reason shown."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"bash syntax error: a missing {node.type!r}"
        if node.is_error:
            text = node_text(node)
            shown = text if len(text) <= 30 else text[:30] + "..."
            return f"bash syntax error near {shown!r}"
        stack.extend(reversed(node.children))
    return "bash syntax error"


class _Reader:
    """Walks one syntax tree, adding its commands and redirections to `acc`."""

    def __init__(self, acc: _Found, depth: int, read_write: frozenset[int]) -> None:
        self.acc = acc
        self.depth = depth  # substitution nesting, shared with backtick re-reads
        self.read_write = read_write  # where a `>` stands for `<>`

    def visit(self, node: Node, level: int) -> None:
        if level > MAX_TREE_DEPTH:
            raise ShellParseError(f"the command nests deeper than {MAX_TREE_DEPTH} levels")
        kind = node.type
        if kind in _ARITHMETIC or (kind == "compound_statement" and _first(node) == "(("):
            raise ShellParseError("arithmetic is not read (bash runs code found in variables)")
        if kind == "subscript":
            index = node.child_by_field_name("index")
            if index is None or not re.fullmatch(r"[0-9]+|[@*]", node_text(index)):
                raise ShellParseError("an array subscript is arithmetic, which is not read")
        if kind == "command":
            self._command(node, level)
        elif kind in ("variable_assignment", "variable_assignments"):
            self._assignments(node, level)
        elif kind in ("declaration_command", "unset_command", "test_command"):
            self._flat_command(node, level)
        elif kind in _REDIRECTS:
            self._redirect(node, level)
        elif kind in _SUBSTITUTIONS:
            self._substitution(node, level)
        elif kind == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.visit(body, level + 1)
        elif kind == "comment":
            return
        else:
            self.children(node, level)

    def children(self, node: Node, level: int) -> None:
        for child in node.children:
            self.visit(child, level + 1)

    def inside(self, node: Node, level: int, *, own: bool = False) -> None:
        """The children of a command's node: an assignment among them (or the node itself,
        `own`) is a word of that command, not a command of its own."""
        for child in [node] if own else node.children:
            if child.type == "variable_assignment":
                self.children(child, level + 1)
            else:
                self.visit(child, level + 1)

    def _add(self, command: SimpleCommand) -> None:
        if len(self.acc.commands) >= MAX_COMMANDS:
            raise ShellParseError(f"more than {MAX_COMMANDS} commands")
        self.acc.commands.append(command)

    def _command(self, node: Node, level: int) -> None:
        """A simple command: assignments, then words; redirections anywhere among them."""
        assignments: list[Word] = []
        parts: list[Node] = []
        for child in node.children:
            if child.type == "variable_assignment":
                assignments.append(word_from([child]))
            elif child.type == "command_name":
                parts.extend(child.children)
            elif child.type not in _REDIRECTS:
                parts.append(child)
        self.inside(node, level)  # what runs inside the words runs first
        words = _normalize([*assignments, *_group(parts)], len(assignments))
        if words is not None:
            self._add(SimpleCommand(tuple(words), len(assignments)))

    def _assignments(self, node: Node, level: int) -> None:
        """`x=1` alone (or several): a command of assignments only."""
        items = [node] if node.type == "variable_assignment" else list(node.named_children)
        self.inside(node, level, own=node.type == "variable_assignment")
        words = [word_from([n]) for n in items if n.type == "variable_assignment"]
        self._add(SimpleCommand(tuple(words), len(words)))

    def _flat_command(self, node: Node, level: int) -> None:
        """`export A=1`, `unset x`, `[[ -f x ]]`: the keyword and every word, in order."""
        self.inside(node, level)
        words: list[Word] = []
        stack = list(reversed(node.children))
        while stack:
            child = stack.pop()
            if child.type in _REDIRECTS or child.type == "comment":
                continue
            if child.type.endswith("_expression"):  # [[ a && (b || c) ]]: its operands
                stack.extend(reversed(child.children))
            else:
                words.append(word_from([child]))
        self._add(SimpleCommand(tuple(words)))

    def _redirect(self, node: Node, level: int) -> None:
        self.children(node, level)
        if node.type != "file_redirect":
            return  # a here-document or here-string is input, not a file
        op_node = next((c for c in node.children if not c.is_named), None)
        op = "" if op_node is None else op_node.type
        if op_node is not None and op_node.start_byte in self.read_write:
            op = "<>"
        targets = node.children_by_field_name("destination")
        if not targets or op not in _FILE_OPS | {"<&"}:
            return
        target = word_from(targets)
        if op in (">&", "<&") and _DUPLICATE.fullmatch(target.value) and target.exact:
            return  # duplicating or closing a descriptor
        if op == "<&" or any(t.type == "process_substitution" for t in targets):
            return  # from a descriptor, or to a process substitution (read as commands)
        self.acc.redirections.append(Redirection(op, target))

    def _substitution(self, node: Node, level: int) -> None:
        if self.depth + 1 > MAX_DEPTH:
            raise ShellParseError(f"substitutions nested deeper than {MAX_DEPTH} levels")
        self.depth += 1
        try:
            text = node_text(node)
            if text.startswith("`"):  # its inside is read again with `\$`, `\``, `\\` undone
                inner = re.sub(r"\\([$`\\])", r"\1", text[1:-1])
                _read(inner, self.acc, self.depth)
            else:
                self.children(node, level)
        finally:
            self.depth -= 1


def _first(node: Node) -> str:
    return node.children[0].type if node.children else ""


def _group(parts: list[Node]) -> list[Word]:
    """Nodes that touch make one word (`$"..."` comes as `$` and a string)."""
    words: list[Word] = []
    run: list[Node] = []
    for part in parts:
        if run and part.start_byte != run[-1].end_byte:
            words.append(word_from(run))
            run = []
        run.append(part)
    if run:
        words.append(word_from(run))
    return words


def _normalize(words: list[Word], assigned: int) -> list[Word] | None:
    """Reserved words the grammar reads as a command: `time [-p] cmd` runs cmd, `coproc
    [NAME] { ...; }` runs what is inside its braces (and `}` alone closes them)."""
    head, rest = words[:assigned], words[assigned:]
    if rest and rest[0].raw == "time":
        rest = rest[1:]
        if rest and rest[0].raw == "-p":
            rest = rest[1:]
    if rest and rest[0].raw == "coproc":
        rest = rest[1:]
        if len(rest) > 1 and rest[1].raw == "{":
            rest = rest[2:]
        elif rest and rest[0].raw == "{":
            rest = rest[1:]
    if [w.raw for w in rest] == ["}"]:
        rest = []
    if not head and not rest:
        return None
    return head + rest
