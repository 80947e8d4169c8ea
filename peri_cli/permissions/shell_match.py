"""Shell-aware matching for `Bash(...)` rules: a rule's pattern, a command's words against it,
and the views a deny rule sees of one command.

A deny rule looks through what can hide a program: `VAR=` prefixes, a path (`/bin/rm` is `rm`),
wrappers that run the command in their arguments (`sudo`, `env`, `command`, `exec`, `nice`,
`timeout`, `xargs`...), `find -exec`, and shell code given as a string (`sh -c '...'`,
`eval`, `env -S`, `trap`). A program named only when the command runs (`$x f`,
`$(echo rm) f`, `eval "$y"`, `sh -c "$z"`) is `runtime`: it may be anything, so every Bash
deny rule may name it (`rules` decides how).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from peri_cli.permissions.shell_syntax import ShellParseError, SimpleCommand, Word, parse


class PatternError(ValueError):
    """A `Bash(...)` specifier that cannot be read; the message says why, in one line."""


@dataclass(frozen=True)
class BashPattern:
    kind: Literal["prefix", "exact", "wildcard"]
    words: tuple[str, ...] = ()
    regex: re.Pattern[str] | None = None


@functools.lru_cache(maxsize=1024)
def bash_pattern(spec: str) -> BashPattern:
    """`git diff:*` (a prefix), `npm run test` (exact), `npm run *` (a wildcard)."""
    text = spec.strip()
    if text.endswith(":*"):
        head = text[:-2].rstrip()
        if "*" in head:
            raise PatternError(f"Bash({spec}): ':*' can only end a rule, with no other '*'")
        return BashPattern("prefix", _exact_words(spec, head))
    if ":*" in text:
        raise PatternError(f"Bash({spec}): ':*' can only end a rule")
    if "*" in text:
        normal = " ".join(text.split())
        pieces = [re.escape(p) for p in normal.split("*")]
        if normal.endswith(" *") and normal.count("*") == 1:  # `ls *` matches `ls` too
            regex = re.escape(normal[:-2]) + "(?: .*)?"
        else:
            regex = ".*".join(pieces)
        return BashPattern("wildcard", regex=re.compile(regex, re.DOTALL))
    return BashPattern("exact", _exact_words(spec, text))


def _exact_words(spec: str, text: str) -> tuple[str, ...]:
    try:
        script = parse(text)
    except ShellParseError as e:
        raise PatternError(f"Bash({spec}): {e}") from e
    if len(script.commands) != 1 or script.redirections:
        raise PatternError(f"Bash({spec}): a rule names one command, with no ';', '|' or '>'")
    words = script.commands[0].words
    if not all(w.exact for w in words):
        raise PatternError(f"Bash({spec}): a rule cannot contain '$', backticks or globs")
    if not words:
        raise PatternError(f"Bash({spec}): no command")
    return tuple(w.value for w in words)


def command_matches(pattern: BashPattern, words: Sequence[Word], *, strict: bool) -> bool:
    """Whether a command's words match; `strict` (for allow) also wants matched words exact."""
    if not words or (strict and not words[0].exact):
        return False
    if pattern.kind == "wildcard":
        assert pattern.regex is not None
        return pattern.regex.fullmatch(" ".join(w.value for w in words)) is not None
    n = len(pattern.words)
    if len(words) < n or (pattern.kind == "exact" and len(words) != n):
        return False
    head = words[:n]
    if strict and not all(w.exact for w in head):
        return False
    return tuple(w.value for w in head) == pattern.words


def raw_mentions(pattern: BashPattern, raw: str) -> bool:
    """For a command that could not be read: does the rule's command appear in it anywhere?"""
    if pattern.kind == "wildcard":
        assert pattern.regex is not None
        return pattern.regex.search(" ".join(raw.split())) is not None
    needle = " ".join(pattern.words)
    return re.search(r"(?<![\w./-])" + re.escape(needle) + r"(?![\w./-])", raw) is not None


# --- what a deny rule sees --------------------------------------------------------------------


@dataclass(frozen=True)
class _Wrapper:
    """A command that runs the command in its arguments: its options that take a value, how
    many words come before the command (`timeout 5 cmd`), and its option that takes shell code
    instead of a command (`env -S '...'`, `flock -c '...'`)."""

    takes: frozenset[str] = frozenset()
    positional: int = 0
    code: frozenset[str] = frozenset()


def _w(takes: str = "", positional: int = 0, code: str = "") -> _Wrapper:
    return _Wrapper(frozenset(takes.split()), positional, frozenset(code.split()))


_WRAPPER_TABLE: dict[str, _Wrapper] = {
    "sudo": _w("-u -g -C -D -h -p -U -r -t -T --user --group --chdir --prompt"),
    "doas": _w("-u -C"),
    "pkexec": _w("--user"),
    "env": _w("-u -C --unset --chdir", code="-S --split-string"),
    "command": _w(),
    "builtin": _w(),
    "exec": _w("-a"),
    "nohup": _w(),
    "nice": _w("-n --adjustment"),
    "time": _w("-f -o --format --output"),
    "timeout": _w("-s -k --signal --kill-after", positional=1),
    "xargs": _w("-I -n -P -L -s -d -E -a --max-args --max-procs --delimiter --arg-file"),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "ionice": _w("-c -n -p -P -u --class --classdata"),
    "setsid": _w(),
    "chrt": _w(positional=1),
    "taskset": _w(positional=1),
    "unbuffer": _w(),
    "caffeinate": _w("-t -w"),
    "busybox": _w(),
    "flock": _w("-w -E --timeout --conflict-exit-code", positional=1, code="-c --command"),
    "watch": _w("-n -d --interval --differences"),
}
WRAPPERS = frozenset(_WRAPPER_TABLE)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh"})
_NAME_TAIL = re.compile(r"[\w.+-]+")
_MAX_NESTING = 3  # shell code inside shell code deeper than this is not looked into


@dataclass
class CommandViews:
    """The word lists a deny rule should match, and whether the program is known only when
    the command runs."""

    views: list[tuple[Word, ...]] = field(default_factory=list)
    runtime: bool = False


def program_name(word: Word) -> str | None:
    """The program a word names, by its basename (`/bin/rm` -> rm); None when it is known only
    at run time (`$x`, `$(echo rm)`, `r?`)."""
    if word.exact:
        return word.value.rstrip("/").rsplit("/", 1)[-1] or word.value
    tail = word.raw.rsplit("/", 1)[-1]
    return tail if "/" in word.raw and _NAME_TAIL.fullmatch(tail) else None


def deny_views(command: SimpleCommand, depth: int = 0) -> CommandViews:
    """The ways a deny rule should see one command: as written, without `VAR=` prefixes, by the
    program's name, past wrappers, and inside `sh -c '...'` and `eval`."""
    found = CommandViews([command.words, command.argv])
    words = command.argv
    name: str | None = None
    while words:
        name = program_name(words[0])
        if name is None:
            found.runtime = True
            return found
        if name != words[0].value:
            found.views.append((Word(name, name), *words[1:]))
        wrapper = _WRAPPER_TABLE.get(name)
        if wrapper is None:
            break
        words, code = _unwrap(wrapper, words[1:])
        if code is not None:
            _look_inside(found, code, depth)
            return found
        if name == "watch":  # runs its words as one line of shell code
            _look_inside(found, words, depth)
            return found
        found.views.append(words)
    if name == "find" and depth < _MAX_NESTING:
        for run in _find_commands(words):
            inner = deny_views(SimpleCommand(run), depth + 1)
            found.views.extend(inner.views)
            found.runtime = found.runtime or inner.runtime
    if name is not None and words:
        code = _shell_code(name, words)
        if code is not None:
            _look_inside(found, code, depth)
    return found


def _unwrap(
    wrapper: _Wrapper, words: tuple[Word, ...]
) -> tuple[tuple[Word, ...], Sequence[Word] | None]:
    """The words after a wrapper's options (and assignments, for env and sudo); the code when
    an option gives shell code instead of a command."""
    positional = wrapper.positional
    while words:
        value = words[0].value
        option = value.split("=", 1)[0]
        if value == "--":
            words = words[1:]
            break
        if option in wrapper.code:
            if "=" in value:
                return (), (Word(value.split("=", 1)[1], words[0].raw, words[0].exact),)
            return (), words[1:2]
        if value.startswith("-") and len(value) > 1:
            takes = value in wrapper.takes or (option in wrapper.takes and "=" not in value)
            if option in ("-c", "--cpu-list"):
                positional = 0  # taskset -c LIST: the list is the option's value
            words = words[2:] if takes else words[1:]
        elif words[0].is_assignment:
            words = words[1:]
        elif positional:
            positional -= 1
            words = words[1:]
        else:
            break
    return words, None


def _find_commands(words: tuple[Word, ...]) -> list[tuple[Word, ...]]:
    """The commands `find -exec CMD ... ;` (and -execdir, -ok, -okdir) runs."""
    out: list[tuple[Word, ...]] = []
    for n, word in enumerate(words):
        if word.value in ("-exec", "-execdir", "-ok", "-okdir"):
            rest = words[n + 1 :]
            end = next((i for i, w in enumerate(rest) if w.value in (";", "+")), len(rest))
            out.append(rest[:end])
    return out


def _shell_code(name: str, words: tuple[Word, ...]) -> Sequence[Word] | None:
    """The words that hold shell code: `eval`'s arguments, `sh -c`'s script."""
    if name == "eval":
        return words[1:]
    if name == "trap":  # trap CODE SIGNAL...: CODE runs later, in this shell
        operands = [w for w in words[1:] if not w.value.startswith("-")]
        return operands[:1] if len(operands) > 1 else None
    if name in SHELLS or name in ("su", "runuser"):
        for n, word in enumerate(words[1:], start=1):
            value = word.value
            if value.startswith("-") and not value.startswith("--") and "c" in value:
                return words[n + 1 : n + 2]
            if not value.startswith("-"):
                break
    return None


def _look_inside(found: CommandViews, code: Sequence[Word], depth: int) -> None:
    """Shell code given as words: known only at run time unless every word is exact."""
    if not code:
        return
    if not all(w.exact for w in code) or depth >= _MAX_NESTING:
        found.runtime = True
        return
    try:
        nested = parse(" ".join(w.value for w in code)).commands
    except ShellParseError:
        found.runtime = True  # code that cannot be read may run anything
        return
    for command in nested:
        inner = deny_views(command, depth + 1)
        found.views.extend(inner.views)
        found.runtime = found.runtime or inner.runtime
