"""A conservative reading of a shell command: which simple commands it runs and which files it
redirects to, so permission rules can judge each part.

It reads the bash syntax models write (quotes, escapes, `;` `&&` `||` `|` `&` newlines, subshells,
`{ ...; }`, `if`/`while`/`for` bodies, `$(...)`, backticks, process substitution, redirections and
here-documents) and gives up with `ShellParseError` on anything else (`case`, function
definitions, arithmetic, arrays, unterminated quotes). The caller asks the user when it gives up:
a command it cannot read is never allowed by a rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_COMMAND_CHARS = 100_000  # longer commands are not read (the caller asks)
MAX_DEPTH = 16  # nested substitutions deeper than this are not read
MAX_COMMANDS = 500  # a script of more simple commands than this is not read

_BLANK = " \t"
_STOP = frozenset(" \t\n;&|()<>")
# Reserved words that only shape control flow: the commands around them are what run.
_TRANSPARENT = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "time"}
)
_UNSUPPORTED = {
    "case": "case statements",
    "esac": "case statements",
    "function": "function definitions",
    "coproc": "coprocesses",
    "select": "select loops",
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_SPECIAL_PARAM = frozenset("@*#?$!-0123456789")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_REDIRECT_OPS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">|", ">&", "&>", "<", ">")
_CONTROL_OPS = ("&&", "||", "|&", ";", "&", "|")


class ShellParseError(Exception):
    """The command uses syntax this reader does not follow; the message says which."""


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


@dataclass(frozen=True)
class SimpleCommand:
    """One command the shell runs: leading `NAME=value` assignments, then the command words."""

    words: tuple[Word, ...]

    @property
    def assignments(self) -> tuple[Word, ...]:
        n = 0
        while n < len(self.words) and self.words[n].is_assignment:
            n += 1
        return self.words[:n]

    @property
    def argv(self) -> tuple[Word, ...]:
        """The words after the leading assignments."""
        return self.words[len(self.assignments) :]

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
        return self.op in _WRITE_OPS or self.op == ">&"

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
    """Read `command`, or raise ShellParseError saying what could not be read."""
    if len(command) > MAX_COMMAND_CHARS:
        raise ShellParseError(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    if "\x00" in command:
        raise ShellParseError("the command contains a NUL byte")
    acc = _Found()
    parser = _Parser(command, 0, acc, depth=0)
    parser.parse_list(close=None)
    changes = any(_changes_directory(c) for c in acc.commands)
    return ShellScript(tuple(acc.commands), tuple(acc.redirections), changes)


def _changes_directory(command: SimpleCommand) -> bool:
    names = [w.value for w in command.argv[:3]]
    return any(n in ("cd", "pushd", "popd") for n in names)


@dataclass
class _Found:
    commands: list[SimpleCommand] = field(default_factory=list)
    redirections: list[Redirection] = field(default_factory=list)


@dataclass
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    expands: bool  # unquoted delimiter: the body undergoes expansion


class _Parser:
    """Reads a command list from `s` starting at `i`; nested substitutions share `s` and `acc`."""

    def __init__(self, s: str, i: int, acc: _Found, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ShellParseError(f"substitutions nested deeper than {MAX_DEPTH} levels")
        self.s = s
        self.i = i
        self.acc = acc
        self.depth = depth
        self.words: list[Word] = []
        self.heredocs: list[_Heredoc] = []
        self.parens = 0

    # --- the command list -------------------------------------------------------------------

    def parse_list(self, close: str | None) -> int:
        """Read until the end, or past the `)` that closes a `$(` (close=")"); return the index."""
        s = self.s
        while True:
            self._skip_blanks()
            if self.i >= len(s):
                if close is not None or self.parens:
                    raise ShellParseError("a parenthesis or substitution is not closed")
                self._end_command()
                return self.i
            c = s[self.i]
            if c == "#" and self._at_word_start():
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c == "\n":
                self.i += 1
                self._end_command()
                self._read_heredoc_bodies()
            elif c == ")":
                if self._close_paren(close):
                    return self.i
            elif c == "(":
                self._open_paren()
            elif self._redirect_op() is not None:
                self._redirection(fd=None)
            elif (op := self._control_op()) is not None:
                if op.startswith(";;") or op == ";&":
                    raise ShellParseError("case statements are not supported")
                self.i += len(op)
                self._end_command()
            else:
                self._word_or_keyword()

    def _close_paren(self, close: str | None) -> bool:
        """A `)`: the end of a subshell, or (True) of the substitution being read."""
        self.i += 1
        self._end_command()
        if self.parens:
            self.parens -= 1
            return False
        if close != ")":
            raise ShellParseError("unexpected ')'")
        if self.heredocs:
            raise ShellParseError("a here-document inside a substitution is not closed")
        return True

    def _at_word_start(self) -> bool:
        return self.i == 0 or self.s[self.i - 1] in _STOP

    def _open_paren(self) -> None:
        if self.words:
            if len(self.words) == 1 and _NAME.fullmatch(self.words[0].raw):
                raise ShellParseError("function definitions are not supported")
            raise ShellParseError("unexpected '(' (arrays are not supported)")
        if self.s.startswith("((", self.i):
            raise ShellParseError("arithmetic commands are not supported")
        self.i += 1
        self.parens += 1

    def _word_or_keyword(self) -> None:
        start = self.i
        word = self._read_word()
        if word.raw.isdigit() and self._redirect_op() is not None and self.i > start:
            self._redirection(fd=word.raw)
            return
        if not self.words and word.raw == word.value:  # an unquoted word in command position
            if word.value in _TRANSPARENT:
                return
            if word.value in _UNSUPPORTED:
                raise ShellParseError(f"{_UNSUPPORTED[word.value]} are not supported")
            if word.value == "for":
                self._for_header()
                return
        self.words.append(word)

    def _for_header(self) -> None:
        """`for NAME [in WORDS]`: the loop variable and its list are not a command."""
        self._skip_blanks()
        if self.s.startswith("((", self.i):
            raise ShellParseError("arithmetic for loops are not supported")
        name = self._read_word()
        if not _NAME.fullmatch(name.raw):
            raise ShellParseError("a for loop without a variable name")
        self._skip_blanks()
        if self.i < len(self.s) and self.s[self.i] not in _STOP:
            if self._read_word().raw != "in":
                raise ShellParseError("a for loop without 'in'")
            while True:  # the list: substitutions in it are found by _read_word
                self._skip_blanks()
                if self.i >= len(self.s) or self.s[self.i] in _STOP:
                    break
                self._read_word()

    def _end_command(self) -> None:
        if self.words:
            if len(self.acc.commands) >= MAX_COMMANDS:
                raise ShellParseError(f"more than {MAX_COMMANDS} commands")
            self.acc.commands.append(SimpleCommand(tuple(self.words)))
            self.words = []

    def _skip_blanks(self) -> None:
        s = self.s
        while self.i < len(s):
            if s[self.i] in _BLANK:
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            else:
                break

    def _control_op(self) -> str | None:
        for op in (";;&", ";;", ";&", *_CONTROL_OPS):
            if self.s.startswith(op, self.i):
                return op
        return None

    def _redirect_op(self) -> str | None:
        s, i = self.s, self.i
        if i < len(s) and s[i] in "<>" and s.startswith("(", i + 1):
            return None  # process substitution, a word
        for op in _REDIRECT_OPS:
            if s.startswith(op, i):
                return op
        return None

    # --- redirections and here-documents ----------------------------------------------------

    def _redirection(self, fd: str | None) -> None:
        op = self._redirect_op()
        assert op is not None
        self.i += len(op)
        self._skip_blanks()
        if self.i >= len(self.s) or (
            self.s[self.i] in _STOP and not self._at_process_substitution()
        ):
            raise ShellParseError(f"a '{op}' redirection without a target")
        target = self._read_word()
        if op in ("<<", "<<-"):
            quoted = target.raw != target.value or not target.exact
            self.heredocs.append(_Heredoc(target.value, op == "<<-", expands=not quoted))
            return
        if op == "<<<":
            return  # a here-string: the word is input, not a file
        if op in (">&", "<&") and re.fullmatch(r"[0-9]*-?", target.value):
            return  # duplicating or closing a descriptor
        if op == "<&":
            return
        if target.raw.startswith(("<(", ">(")):
            return  # to or from a process substitution, already read as commands
        del fd  # which descriptor is redirected does not change what file is written
        self.acc.redirections.append(Redirection(op, target))

    def _at_process_substitution(self) -> bool:
        s, i = self.s, self.i
        return i + 1 < len(s) and s[i] in "<>" and s[i + 1] == "("

    def _read_heredoc_bodies(self) -> None:
        s = self.s
        for doc in self.heredocs:
            lines: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                line = s[self.i : end]
                self.i = min(end + 1, len(s))
                if (line.lstrip("\t") if doc.strip_tabs else line) == doc.delimiter:
                    break
                lines.append(line)
            body = "\n".join(lines)
            if doc.expands and ("$(" in body or "`" in body or "${" in body):
                raise ShellParseError("a here-document with substitutions is not supported")
        self.heredocs = []

    # --- words ----------------------------------------------------------------------------

    def _read_word(self) -> Word:
        s = self.s
        start = self.i
        value: list[str] = []
        exact = True
        if self._at_process_substitution():
            self.i += 2
            self.i = _Parser(s, self.i, self.acc, self.depth + 1).parse_list(close=")")
            return Word(s[start : self.i], s[start : self.i], exact=False)
        if s.startswith("~", self.i):
            exact = False
        last_close = s.rfind("]", self.i, self._word_end())  # a `[` before it may be a glob
        while self.i < len(s):
            c = s[self.i]
            if c in _STOP:
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                value.append(s[self.i + 1 : self.i + 2] or "\\")
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellParseError("a single quote is not closed")
                value.append(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                self.i += 1
                exact = self._double_quoted(value) and exact
            elif c == "$":
                exact = self._dollar(value, quoted=False) and exact
            elif c == "`":
                self._backticks(value)
                exact = False
            else:
                if c in "*?" or (c == "[" and last_close > self.i):
                    exact = False
                value.append(c)
                self.i += 1
        raw = s[start : self.i]
        if exact and "{" in raw and _BRACE_EXPANSION.search(raw):
            exact = False
        return Word("".join(value), raw, exact)

    def _word_end(self) -> int:
        j = self.i
        while j < len(self.s) and self.s[j] not in _STOP:
            j += 1
        return j

    def _double_quoted(self, value: list[str]) -> bool:
        """Read up to the closing quote; False when something inside expands."""
        s = self.s
        exact = True
        while True:
            if self.i >= len(s):
                raise ShellParseError("a double quote is not closed")
            c = s[self.i]
            if c == '"':
                self.i += 1
                return exact
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    value.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                exact = self._dollar(value, quoted=True) and exact
            elif c == "`":
                self._backticks(value)
                exact = False
            else:
                value.append(c)
                self.i += 1

    def _dollar(self, value: list[str], *, quoted: bool) -> bool:
        """An expansion at `$`; False when it expands (True for a lone literal `$`)."""
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        if s.startswith("$((", i) or nxt == "[":
            raise ShellParseError("arithmetic expansion is not supported")
        if nxt == "(":
            end = _Parser(s, i + 2, self.acc, self.depth + 1).parse_list(close=")")
            value.append(s[i:end])
            self.i = end
            return False
        if nxt == "{":
            end = self._brace_end(i + 2)
            inner = s[i + 2 : end - 1]
            if "$(" in inner or "`" in inner or re.search(r"@[A-Za-z]", inner):
                raise ShellParseError("a complex ${...} expansion is not supported")
            value.append(s[i:end])
            self.i = end
            return False
        if not quoted and nxt in ("'", '"'):
            if nxt == '"':  # $"..." is a translated string: a double-quoted one here
                self.i += 2
                self._double_quoted(value)
                return False
            end = i + 2
            while end < len(s) and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            if end >= len(s):
                raise ShellParseError("a $'...' quote is not closed")
            value.append(s[i : end + 1])
            self.i = end + 1
            return False
        if nxt and nxt in _SPECIAL_PARAM:
            value.append(s[i : i + 2])
            self.i += 2
            return False
        m = _NAME.match(s, i + 1)
        if m:
            value.append(s[i : m.end()])
            self.i = m.end()
            return False
        value.append("$")
        self.i += 1
        return True

    def _brace_end(self, i: int) -> int:
        """The index after the `}` closing a `${` whose body starts at `i`."""
        s, depth = self.s, 1
        while i < len(s):
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                j = s.find("'", i + 1)
                if j < 0:
                    break
                i = j + 1
                continue
            if s.startswith("${", i):
                depth += 1
                i += 2
                continue
            if c == "}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise ShellParseError("a ${ expansion is not closed")

    def _backticks(self, value: list[str]) -> None:
        """A `...` substitution: its content is read as commands of its own."""
        s = self.s
        start = self.i
        j = self.i + 1
        inner: list[str] = []
        while True:
            if j >= len(s):
                raise ShellParseError("a backtick substitution is not closed")
            c = s[j]
            if c == "\\" and j + 1 < len(s):
                nxt = s[j + 1]
                inner.append(nxt if nxt in "$`\\" else c + nxt)
                j += 2
                continue
            if c == "`":
                break
            inner.append(c)
            j += 1
        nested = _Parser("".join(inner), 0, self.acc, self.depth + 1)
        nested.parse_list(close=None)
        self.i = j + 1
        value.append(s[start : self.i])
