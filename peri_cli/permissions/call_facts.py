"""The call being judged, as the rules see it: the tool, its command, the files it reads,
searches and writes (`Call`, from what the tool says of its input, by `describe_call`), and
where it runs (`RuleContext`). `facts_of` reads a shell command with the grammar
(`shell_syntax`): its parts, how deny rules see them (`shell_match`), its redirections as reads
and writes of their targets;
`guarded_argument` finds an argument naming a protected path or a place outside the workspace.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from peri_cli.base.tool import Tool, ToolContext, ToolKind, Writes
from peri_cli.permissions.asking import protected_path
from peri_cli.permissions.hosts import canonical_host
from peri_cli.permissions.shell_match import deny_views
from peri_cli.permissions.shell_syntax import (
    ShellParseError,
    ShellScript,
    SimpleCommand,
    Word,
    parse,
)

# Special files a redirection may name without writing anything the user keeps.
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


@dataclass(frozen=True)
class Call:
    """What the rules look at in one tool call (the real target of an ExecuteExtraTool call).
    A Read rule covers a call that reads or searches files, an Edit or Write rule one that
    writes them: what the tool says it touches decides, never a list of names."""

    tool: str
    kind: ToolKind
    command: str | None = None  # Bash
    reads: tuple[Path, ...] = ()  # files read (Read, `@` attachments)
    searches: tuple[Path, ...] = ()  # folders or files searched (Grep, Glob)
    writes: tuple[Path, ...] = ()  # files written, as given and as the tool resolved them
    subject: str | None = None  # what `Tool(glob)` rules match: Agent's type, Skill's name
    tool_input: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def reader(self) -> bool:
        """The tool itself reads files (not a shell's redirection): a bare `Read` rule names it."""
        return bool(self.reads or self.searches)

    @property
    def writer(self) -> bool:
        """The tool itself writes files: a bare `Edit` or `Write` rule names it."""
        return bool(self.writes)


def describe_call(
    tool: Tool,
    params: Any,
    tool_input: Mapping[str, Any],
    ctx: ToolContext,
    writes: Writes | None = None,
) -> Call:
    """A Call from what the tool says of its validated input: what it reads, writes (`writes`
    when already asked) and names."""
    read = tool.reads(params, ctx)
    wrote = tool.writes(params, ctx) if writes is None else writes
    command = tool_input.get("command") if tool.name == "Bash" else None
    return Call(
        tool=tool.name,
        kind=tool.kind,
        command=command if isinstance(command, str) else None,
        reads=read.files,
        searches=read.searches,
        writes=(*wrote.given, *wrote.paths),
        subject=tool.subject(params),
        tool_input=dict(tool_input),
    )


def url_domain(url: object) -> str | None:
    """The host an http(s) URL names (canonical, as hosts.py compares it), or None otherwise."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return canonical_host(parts.hostname)


@dataclass(frozen=True)
class RuleContext:
    """What the rules are judged against."""

    workspace: Path
    trusted: bool
    home: Path = field(default_factory=Path.home)

    @functools.cached_property
    def root(self) -> Path:
        return self.workspace.resolve()


@dataclass(frozen=True)
class Target:
    """A path as written (made absolute, `..` folded) and as it resolves (symlinks followed)."""

    written: str
    resolved: str

    @property
    def path(self) -> Path:
        return Path(self.resolved)


def target_of(path: Path, ctx: RuleContext) -> Target:
    """`path` as the rules compare it: from the workspace, as written and as it resolves."""
    path = path.expanduser()
    if not path.is_absolute():
        path = ctx.workspace / path
    written = _clean(os.path.normpath(path))
    given_ws = _clean(os.path.normpath(ctx.workspace.absolute()))
    if written == given_ws or written.startswith(given_ws.rstrip("/") + "/"):
        written = str(ctx.root) + written[len(given_ws.rstrip("/")) :]  # compare in one place
    return Target(written, str(path.resolve()))


def _clean(path: str) -> str:
    return "/" + path.lstrip("/") if path.startswith("//") else path


@dataclass(frozen=True)
class CallFacts:
    """The parts of a call the rules match: commands, and the files read, searched, written."""

    commands: tuple[SimpleCommand, ...] = ()
    deny_views: tuple[tuple[Word, ...], ...] = ()  # the commands as deny rules see them
    unreadable: str | None = None  # why the shell command could not be read
    reads: tuple[Target, ...] = ()
    searches: tuple[Target, ...] = ()
    writes: tuple[Target, ...] = ()
    unknown_write: str | None = None  # a redirection whose file is known only when it runs
    changes_directory: bool = False  # a `cd`: the later parts' relative paths mean other files
    runtime: bool = False  # a program known only when the command runs (`$x f`, `eval "$y"`)


def facts_of(call: Call, ctx: RuleContext) -> CallFacts:
    """What `call` touches; a shell command the grammar cannot read is `unreadable`."""
    reads = [target_of(p, ctx) for p in call.reads]
    writes = [target_of(p, ctx) for p in call.writes]
    searches = tuple(target_of(p, ctx) for p in call.searches)
    if call.tool != "Bash" or call.command is None:
        return CallFacts(reads=tuple(reads), searches=searches, writes=tuple(writes))
    try:
        script = parse(call.command)
    except ShellParseError as e:
        return CallFacts(unreadable=str(e))
    unknown: str | None = None
    for redirection in script.redirections:
        target = _redirect_path(redirection.target, script, ctx)
        if target is None:
            if redirection.writes:
                unknown = unknown or redirection.target.raw
            continue
        if str(target) in _HARMLESS_DEVICES or str(target).startswith("/dev/fd/"):
            continue
        (writes if redirection.writes else reads).append(target_of(target, ctx))
        if redirection.writes and redirection.reads:  # `<>` opens for both
            reads.append(target_of(target, ctx))
    seen = [deny_views(cmd) for cmd in script.commands]
    views = tuple(dict.fromkeys(v for s in seen for v in s.views))
    return CallFacts(
        script.commands,
        views,
        None,
        tuple(reads),
        searches,
        tuple(writes),
        unknown,
        script.changes_directory,
        any(s.runtime for s in seen),
    )


def _redirect_path(word: Word, script: ShellScript, ctx: RuleContext) -> Path | None:
    """The file a redirection names, or None when it is known only at run time."""
    value = word.value
    if not word.exact:
        tail = word.raw[2:] if word.raw.startswith("~/") else None
        if word.raw == "~":
            return ctx.home
        if tail is None or any(c in tail for c in "$`*?[{\\'\""):
            return None
        value = str(ctx.home / tail)
    path = Path(value)
    if not path.is_absolute():
        if script.changes_directory:
            return None
        path = ctx.workspace / path
    return path


_DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})


def guarded_argument(command: SimpleCommand, ctx: RuleContext) -> str | None:
    """The first argument of `command` that names a protected path (`.git/hooks/x`) or a place
    outside the workspace (`~/.bashrc`, `/etc/x`, `../x`, a link leading out), None when there
    is none. A prefix rule's user read "copy files here", not "install a git hook": no prefix
    or wildcard rule covers such a command and none is offered for it; it asks. Words are read
    as paths from the workspace (an option's `--opt=value` by its value); a word known only at
    run time is judged by its literal text, and `~` or `$HOME` lead out."""
    argv = command.argv
    if not argv:
        return None
    operands = argv[1:]
    if argv[0].value in _DIRECTORY_CHANGERS:
        # `cd` alone goes home, `cd -` and `popd` wherever the shell was: all unknown here.
        places = [w for w in operands if not w.value.startswith("-") or w.value == "-"]
        if not places or any(not w.exact or w.value == "-" for w in places):
            return command.text or argv[0].value
    for word in operands:
        value = word.value
        if value.startswith("-"):
            if "=" not in value:
                continue
            value = value.split("=", 1)[1]
        if not word.exact and (
            word.raw.startswith("~") or re.match(r"[\"']?\$\{?HOME\b", word.raw)
        ):
            return word.raw
        if not value or value in _HARMLESS_DEVICES or value.startswith("/dev/fd/"):
            continue
        path = Path(value)
        target = target_of(path if path.is_absolute() else ctx.workspace / path, ctx)
        if not inside(Path(target.written), ctx.root) or not inside(target.path, ctx.root):
            return value
        if protected_path(Path(target.written), ctx.workspace) is not None:
            return value
    return None


def inside(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or below it."""
    return path == root or root in path.parents
