"""Permission rules in Claude Code's syntax: parsing, where each came from, and judging one call.

`Bash(git diff:*)` allows a command that starts with those words, `Bash(npm run test)` exactly
that command, `Bash(npm run *)` a wildcard; `Read(./secrets/**)` and `Edit(src/**)` are path
globs relative to the workspace; `mcp__server__tool`, `mcp__server` and a bare tool name match by
name. Rules are judged deny -> ask -> allow; when none decides, the permission mode does
(`decide`). A shell command is judged part by part (`shell_syntax`, `shell_match`), its
redirections as edits of
their targets; one it cannot read is never allowed by a rule. Allow rules from the workspace's own
files apply only in a trusted workspace; deny and ask rules always apply.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from peri_cli.base.modes import Mode
from peri_cli.base.settings import SettingsLayer
from peri_cli.base.textsafe import visible
from peri_cli.base.tool import ToolKind
from peri_cli.permissions.asking import decide as mode_decide
from peri_cli.permissions.asking import protected_path
from peri_cli.permissions.hosts import canonical_host, host_matches
from peri_cli.permissions.shell_match import (
    BashPattern,
    PatternError,
    bash_pattern,
    command_matches,
    deny_views,
    raw_mentions,
)
from peri_cli.permissions.shell_suggest import command_rule, reads_program_from_stdin
from peri_cli.permissions.shell_syntax import (
    ShellParseError,
    ShellScript,
    SimpleCommand,
    Word,
    parse,
)
from peri_cli.permissions.trust import Loosening, WorkspaceFiles

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")  # the order they are judged in
Scope = Literal["user", "project", "local", "cli", "session"]
WORKSPACE_SCOPES: frozenset[str] = frozenset({"project", "local"})

# A Read rule covers every tool that reads files (and `@` attachments, judged as Read); an Edit
# or Write rule every tool that writes them, shell redirections included.
READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
PATH_RULE_TOOLS = frozenset({"Read", "Edit", "Write"})
SUBJECT_FIELDS = {"Agent": "subagent_type", "Skill": "name"}  # Tool(glob) on this input field
WEB_FETCH = "WebFetch"  # WebFetch(domain:HOST): its subject is the URL's host

_TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_MCP_PREFIX = "mcp__"
# Special files a redirection may name without writing anything the user keeps.
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


class RuleError(ValueError):
    """A rule that cannot be read; the message says why, in one line."""


@dataclass(frozen=True)
class RuleSource:
    """Where a rule came from: a settings file, the command line, or an answer this session."""

    scope: Scope
    path: str = ""  # the settings file, or the flag ("--allowedTools")

    @property
    def from_workspace(self) -> bool:
        """A repository's own file: its allow rules wait for workspace trust."""
        return self.scope in WORKSPACE_SCOPES

    def __str__(self) -> str:
        if self.scope == "session":
            return "this session"
        return self.path or self.scope


@dataclass(frozen=True)
class Rule:
    """One rule as written (`text`), parsed: the tool it names and what it says about it."""

    behavior: Behavior
    text: str
    tool: str  # "Bash", "Edit", "mcp__github__create_issue", "mcp__github" (a whole server)
    specifier: str | None  # what is inside the parentheses, None for a bare name
    source: RuleSource

    def applies(self, trusted: bool) -> bool:
        return trusted or self.behavior != "allow" or not self.source.from_workspace

    def __str__(self) -> str:
        return f"{self.behavior} {self.text} (from {self.source})"


def parse_rule(text: str, behavior: Behavior, source: RuleSource) -> Rule:
    """One rule string, or RuleError saying what is wrong with it."""
    rule = text.strip()
    if not rule:
        raise RuleError("an empty rule")
    spec: str | None = None
    name = rule
    if "(" in rule:
        if not rule.endswith(")"):
            raise RuleError(f"{rule!r}: a rule with '(' must end with ')'")
        name, spec = rule[: rule.index("(")].strip(), rule[rule.index("(") + 1 : -1].strip()
        if not spec:
            raise RuleError(f"{rule!r}: nothing between the parentheses; write {name} alone")
    elif ")" in rule:
        raise RuleError(f"{rule!r}: ')' without '('")
    star = name.endswith("*") and name.startswith(_MCP_PREFIX)
    if not _TOOL_NAME.fullmatch(name[:-1] if star else name):
        raise RuleError(f"{rule!r}: {name!r} is not a tool name")
    if star:
        name = name[:-1].rstrip("_")
        if spec is not None:
            raise RuleError(f"{rule!r}: a wildcard tool name takes no parentheses")
    if spec is not None:
        _check_specifier(rule, name, spec)
    return Rule(behavior, rule, name, spec, source)


def _check_specifier(rule: str, tool: str, spec: str) -> None:
    if tool == WEB_FETCH:
        if not spec.startswith("domain:") or not spec.removeprefix("domain:").strip():
            raise RuleError(f"{rule!r}: WebFetch takes domain:HOST, e.g. WebFetch(domain:x.org)")
    elif tool == "Bash":
        try:
            bash_pattern(spec)
        except PatternError as e:
            raise RuleError(str(e)) from e
    elif tool in PATH_RULE_TOOLS:
        if "\x00" in spec:
            raise RuleError(f"{rule!r}: a path with a NUL byte")
    elif tool not in SUBJECT_FIELDS:
        takes = ", ".join(["Bash", *sorted(PATH_RULE_TOOLS), *sorted(SUBJECT_FIELDS)])
        raise RuleError(f"{rule!r}: {tool} takes no parentheses (only {takes} do)")


# --- where rules come from --------------------------------------------------------------------


def rules_from_settings(value: Any, source: RuleSource) -> tuple[list[Rule], list[str]]:
    """The `permissions` value of one settings file (raw JSON) -> its rules and, one line each,
    what was wrong with it. A bad rule is skipped and reported, never fatal."""
    rules: list[Rule] = []
    problems: list[str] = []
    if value is None:
        return rules, problems
    where = source.path or str(source)
    if not isinstance(value, dict):
        problems.append(f"{where}: permissions: expected an object with allow, ask and deny lists")
        return rules, problems
    for key, items in value.items():
        if key not in ("allow", "ask", "deny"):
            problems.append(
                visible(
                    f"{where}: permissions.{key}: not supported; ignored (use allow, ask, deny)"
                )
            )
            continue
        if not isinstance(items, list):
            problems.append(f"{where}: permissions.{key}: expected a list of rule strings")
            continue
        for n, item in enumerate(items):
            if not isinstance(item, str):
                problems.append(f"{where}: permissions.{key}[{n}]: expected a string")
                continue
            try:
                rules.append(parse_rule(item, key, source))
            except RuleError as e:
                problems.append(visible(f"{where}: permissions.{key}[{n}]: {e}; ignored"))
    return rules, problems


def split_cli_rules(text: str) -> list[str]:
    """`--allowedTools "Bash(git diff:*),Edit Read"` -> the rules: commas and spaces separate
    them except inside parentheses."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (c == "," or c.isspace()):
            out.append("".join(current))
            current = []
        else:
            current.append(c)
    out.append("".join(current))
    return [r.strip() for r in out if r.strip()]


def rules_from_cli(
    values: Sequence[str], behavior: Behavior, flag: str
) -> tuple[list[Rule], list[str]]:
    """Rules given on the command line (each flag value may hold several)."""
    rules: list[Rule] = []
    problems: list[str] = []
    source = RuleSource("cli", flag)
    for value in values:
        for text in split_cli_rules(value):
            try:
                rules.append(parse_rule(text, behavior, source))
            except RuleError as e:
                problems.append(visible(f"{flag}: {e}"))
    return rules, problems


@dataclass
class RuleSet:
    """Every rule in force, in the order their sources were read, plus what was wrong with them."""

    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def extend(self, found: tuple[list[Rule], list[str]]) -> None:
        self.rules.extend(found[0])
        self.problems.extend(found[1])

    def add(self, rule: Rule) -> None:
        if rule not in self.rules:
            self.rules.append(rule)

    def active(self, trusted: bool) -> list[Rule]:
        return [r for r in self.rules if r.applies(trusted)]

    def withheld(self, trusted: bool) -> list[Rule]:
        """Allow rules from the workspace's files left out because it is not trusted."""
        return [r for r in self.rules if not r.applies(trusted)]


def ruleset_from_layers(layers: Iterable[SettingsLayer]) -> RuleSet:
    """The `permissions` of every settings file, in the order the files were read."""
    ruleset = RuleSet()
    for layer in layers:
        source = RuleSource(layer.scope, str(layer.path))
        ruleset.extend(rules_from_settings(layer.data.get("permissions"), source))
    return ruleset


def allow_rule_loosenings(files: WorkspaceFiles) -> list[Loosening]:
    """A trust detector: allow rules in the workspace's own settings files, one line per file."""
    out: list[Loosening] = []
    for layer in files.layers:
        if not layer.from_workspace:
            continue
        found, _ = rules_from_settings(
            layer.data.get("permissions"), RuleSource(layer.scope, str(layer.path))
        )
        allows = [r.text for r in found if r.behavior == "allow"]
        if allows:
            shown = ", ".join(allows[:5]) + (
                f" and {len(allows) - 5} more" if len(allows) > 5 else ""
            )
            out.append(Loosening("allow_rule", f"allow rules {shown}", files.label(layer.path)))
    return out


# --- the call being judged ---------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """What the rules look at in one tool call (the real target of an ExecuteExtraTool call)."""

    tool: str
    kind: ToolKind
    command: str | None = None  # Bash
    reads: tuple[Path, ...] = ()  # files read (Read, `@` attachments)
    searches: tuple[Path, ...] = ()  # folders or files searched (Grep, Glob)
    writes: tuple[Path, ...] = ()  # files written, as given and as the tool resolved them
    subject: str | None = None  # Agent's subagent_type, Skill's name


def describe_call(
    tool: str,
    kind: ToolKind,
    tool_input: Mapping[str, Any],
    writes: Iterable[Path],
    workspace: Path,
) -> Call:
    """A Call from a tool's name, kind, input and the paths its `writes()` named."""

    def path(key: str) -> Path | None:
        value = tool_input.get(key)
        if not isinstance(value, str) or not value:
            return None
        p = Path(value).expanduser()
        return p if p.is_absolute() else workspace / p

    written = list(writes)
    if tool in WRITE_TOOLS and (given := path("file_path")) is not None:
        written.insert(0, given)
    reads: tuple[Path, ...] = ()
    searches: tuple[Path, ...] = ()
    if tool == "Read" and (p := path("file_path")) is not None:
        reads = (p,)
    elif tool in ("Grep", "Glob"):
        root = path("path") or workspace
        pattern = tool_input.get("glob" if tool == "Grep" else "pattern")
        searches = (root / _static_prefix(pattern) if isinstance(pattern, str) else root,)
    command = tool_input.get("command") if tool == "Bash" else None
    subject = tool_input.get(SUBJECT_FIELDS[tool]) if tool in SUBJECT_FIELDS else None
    if tool == WEB_FETCH:
        host = url_domain(tool_input.get("url"))
        subject = None if host is None else f"domain:{host}"
    return Call(
        tool=tool,
        kind=kind,
        command=command if isinstance(command, str) else None,
        reads=reads,
        searches=searches,
        writes=tuple(written),
        subject=subject if isinstance(subject, str) else None,
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


def _static_prefix(pattern: str) -> str:
    """The folders a glob pattern starts with before its first wildcard ("src/**/*.py" -> src)."""
    parts: list[str] = []
    for seg in pattern.split("/")[:-1]:
        if any(c in seg for c in "*?[{"):
            break
        parts.append(seg)
    return "/".join(parts)


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
class _Target:
    """A path as written (made absolute, `..` folded) and as it resolves (symlinks followed)."""

    written: str
    resolved: str

    @property
    def path(self) -> Path:
        return Path(self.resolved)


def _target(path: Path, ctx: RuleContext) -> _Target:
    path = path.expanduser()
    if not path.is_absolute():
        path = ctx.workspace / path
    written = _clean(os.path.normpath(path))
    given_ws = _clean(os.path.normpath(ctx.workspace.absolute()))
    if written == given_ws or written.startswith(given_ws.rstrip("/") + "/"):
        written = str(ctx.root) + written[len(given_ws.rstrip("/")) :]  # compare in one place
    return _Target(written, str(path.resolve()))


def _clean(path: str) -> str:
    return "/" + path.lstrip("/") if path.startswith("//") else path


@dataclass(frozen=True)
class _Facts:
    """The parts of a call the rules match: commands, and the files read, searched, written."""

    commands: tuple[SimpleCommand, ...] = ()
    deny_views: tuple[tuple[Word, ...], ...] = ()  # the commands as deny rules see them
    unreadable: str | None = None  # why the shell command could not be read
    reads: tuple[_Target, ...] = ()
    searches: tuple[_Target, ...] = ()
    writes: tuple[_Target, ...] = ()
    unknown_write: str | None = None  # a redirection whose file is known only when it runs
    changes_directory: bool = False  # a `cd`: the later parts' relative paths mean other files
    runtime: bool = False  # a program known only when the command runs (`$x f`, `eval "$y"`)


def _facts(call: Call, ctx: RuleContext) -> _Facts:
    reads = [_target(p, ctx) for p in call.reads]
    writes = [_target(p, ctx) for p in call.writes]
    searches = tuple(_target(p, ctx) for p in call.searches)
    if call.tool != "Bash" or call.command is None:
        return _Facts(reads=tuple(reads), searches=searches, writes=tuple(writes))
    try:
        script = parse(call.command)
    except ShellParseError as e:
        return _Facts(unreadable=str(e))
    unknown: str | None = None
    for redirection in script.redirections:
        target = _redirect_path(redirection.target, script, ctx)
        if target is None:
            if redirection.writes:
                unknown = unknown or redirection.target.raw
            continue
        if str(target) in _HARMLESS_DEVICES or str(target).startswith("/dev/fd/"):
            continue
        (writes if redirection.writes else reads).append(_target(target, ctx))
        if redirection.writes and redirection.reads:  # `<>` opens for both
            reads.append(_target(target, ctx))
    seen = [deny_views(cmd) for cmd in script.commands]
    views = tuple(dict.fromkeys(v for s in seen for v in s.views))
    return _Facts(
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


# --- matching ---------------------------------------------------------------------------------


def _name_matches(rule_tool: str, tool: str) -> bool:
    """A bare rule name against a tool name: exact, a whole MCP server, or the Read/Edit family."""
    if rule_tool == tool:
        return True
    if rule_tool == "mcp":  # written `mcp__*`: every MCP tool
        return tool.startswith(_MCP_PREFIX)
    if rule_tool.startswith(_MCP_PREFIX) and tool.startswith(rule_tool + "__"):
        return rule_tool.count("__") == 1  # mcp__server covers its tools; a tool name only itself
    if rule_tool == "Read":
        return tool in READ_TOOLS
    return rule_tool in ("Edit", "Write") and tool in WRITE_TOOLS


@dataclass(frozen=True)
class _PathPattern:
    sensitive: re.Pattern[str]
    folded: re.Pattern[str]


@functools.lru_cache(maxsize=1024)
def _path_pattern(spec: str, root: str, home: str) -> _PathPattern:
    """A rule's path glob as a regex over absolute paths (gitignore-style: `*` stays within a
    folder, `**` crosses folders, a name without `/` matches at any depth)."""
    if spec.startswith("//"):
        base, rest = "/", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        base, rest = home, spec[2:]
    elif spec.startswith("/"):
        base, rest = root, spec[1:]
    elif spec.startswith("./") or spec == ".":
        base, rest = root, spec[2:]
    else:
        base, rest = root, (spec if "/" in spec.rstrip("/") else "**/" + spec)
    if not rest or rest.endswith("/"):
        rest += "**"
    segments = [s for s in rest.split("/") if s not in ("", ".")]
    k = 0
    while k < len(segments) and not any(c in segments[k] for c in "*?["):
        k += 1
    static = os.path.realpath(os.path.normpath(os.path.join(base, *segments[:k])))
    body = _glob_regex(segments[k:])
    regex = ("" if static == "/" else re.escape(static)) + body
    if not body and static == "/":
        regex = "/"
    return _PathPattern(re.compile(regex, re.DOTALL), re.compile(regex, re.DOTALL | re.I))


def _glob_regex(segments: Sequence[str]) -> str:
    out = ""
    for n, seg in enumerate(segments):
        if seg == "**":
            out += "/.+" if n == len(segments) - 1 else "(?:/[^/]+)*"
        else:
            out += "/" + _segment_regex(seg)
    return out


def _segment_regex(seg: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            while i + 1 < len(seg) and seg[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := seg.find("]", i + 2)) > 0:
            body = seg[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            # A glob's class holds literal characters: a backslash, and `[` (which `re` would
            # read as the start of a nested set, with a FutureWarning), are escaped; so are
            # `&`, `~` and `|`, which `re` reserves for set operations when doubled.
            out.append("[" + re.sub(r"([\\\[&~|])", r"\\\1", body) + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _path_hit(
    spec: str, target: _Target, ctx: RuleContext, *, strict: bool, folder: bool = False
) -> bool:
    """Whether a path rule covers a target. Allow (`strict`) looks only at the resolved path,
    case-sensitively; deny and ask also at the path as written, ignoring case. A searched
    `folder` is covered when everything inside it is."""
    pattern = _path_pattern(spec, str(ctx.root), str(ctx.home))
    regex = pattern.sensitive if strict else pattern.folded
    candidates = [target.resolved] if strict else [target.resolved, target.written]
    for path in candidates:
        if regex.fullmatch(path):
            return True
        if folder and regex.fullmatch(path.rstrip("/") + "/\x00"):
            return True
    return False


def _loose_hit(rule: Rule, call: Call, facts: _Facts, ctx: RuleContext) -> bool:
    """Whether a deny or ask rule touches any part of the call."""
    spec = rule.specifier
    if rule.tool == "Bash" and call.tool == "Bash":
        if spec is None:
            return True
        pattern = bash_pattern(spec)
        if facts.unreadable is not None:
            return raw_mentions(pattern, call.command or "")
        return any(command_matches(pattern, view, strict=False) for view in facts.deny_views)
    if rule.tool in PATH_RULE_TOOLS:
        reading = rule.tool == "Read"
        if spec is None:
            if _name_matches(rule.tool, call.tool):
                return True
            return bool(facts.reads if reading else facts.writes or facts.unknown_write)
        if reading:
            return any(_path_hit(spec, t, ctx, strict=False) for t in facts.reads) or any(
                _path_hit(spec, t, ctx, strict=False, folder=True) for t in facts.searches
            )
        return any(_path_hit(spec, t, ctx, strict=False) for t in facts.writes)
    return _tool_hit(rule, call)


def _tool_hit(rule: Rule, call: Call) -> bool:
    if not _name_matches(rule.tool, call.tool):
        return False
    if rule.specifier is None:
        return True
    if call.subject is None:
        return False
    if rule.tool == WEB_FETCH:  # one host in any spelling (hosts.py)
        return host_matches(
            rule.specifier.removeprefix("domain:"), call.subject.removeprefix("domain:")
        )
    return _fnmatch(rule.specifier, call.subject)


def _fnmatch(pattern: str, value: str) -> bool:
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), value) is not None


# --- judging one call -------------------------------------------------------------------------

RuleAction = Literal["allow", "ask", "deny", "none"]


@dataclass(frozen=True)
class RuleDecision:
    """What the rules say about one call. `none`: no rule decided, the mode does; the fields
    still say what the allow rules covered, so the mode judges only the rest."""

    action: RuleAction
    reason: str = ""
    rule: Rule | None = None
    call_allowed: bool = False  # every command part (Bash) or the tool itself is allowed by a rule
    writes: tuple[Path, ...] = ()  # every file it writes (tools' paths and redirections), resolved
    pending_writes: tuple[Path, ...] = ()  # the writes no allow rule covers
    unknown_write: str | None = None  # a redirection target known only at run time
    may_be_denied: bool = False  # asks because a deny rule may name what runs: bypass denies


def evaluate(call: Call, rules: Iterable[Rule], ctx: RuleContext) -> RuleDecision:
    """Judge `call` by the rules alone: deny, then ask, then allow."""
    active = [r for r in rules if r.applies(ctx.trusted)]
    facts = _facts(call, ctx)
    for behavior in ("deny", "ask"):
        for rule in active:
            if rule.behavior == behavior and _loose_hit(rule, call, facts, ctx):
                verb = "denied" if behavior == "deny" else "needs approval"
                return RuleDecision(
                    behavior, f"{verb} by the rule {rule.text} ({rule.source})", rule
                )
    if (unknown := _unknown_program(call, facts, active)) is not None:
        return unknown
    if facts.unreadable is not None:
        return RuleDecision(
            "ask", f"the command could not be checked against the rules ({facts.unreadable})"
        )
    allows = [r for r in active if r.behavior == "allow"]
    call_allowed = _call_allowed(call, facts, allows, ctx)
    pending = tuple(t.path for t in facts.writes if not _write_allowed(t, allows, ctx))
    writes = tuple(dict.fromkeys(t.path for t in facts.writes))
    everything = call_allowed and not pending and facts.unknown_write is None
    if call.kind == "write" and writes:
        everything = not pending and facts.unknown_write is None
    return RuleDecision(
        "allow" if everything else "none",
        "allowed by the rules" if everything else "",
        None,
        call_allowed,
        writes,
        tuple(dict.fromkeys(pending)),
        facts.unknown_write,
    )


def _unknown_program(call: Call, facts: _Facts, active: Sequence[Rule]) -> RuleDecision | None:
    """A command whose program is known only when it runs, or that cannot be read, may be
    what any Bash deny or ask rule names: it asks (bypass mode denies it: `decide`)."""
    if call.tool != "Bash" or not (facts.runtime or facts.unreadable is not None):
        return None
    named = [r for r in active if r.tool == "Bash" and r.behavior in ("deny", "ask")]
    if not named:
        return None
    rule = next((r for r in named if r.behavior == "deny"), named[0])
    what = (
        "runs a program known only when the command runs"
        if facts.unreadable is None
        else f"could not be read ({facts.unreadable})"
    )
    reason = f"the command {what}: the rule {rule.text} ({rule.source}) may name it"
    return RuleDecision("ask", reason, rule, may_be_denied=rule.behavior == "deny")


def _call_allowed(call: Call, facts: _Facts, allows: Sequence[Rule], ctx: RuleContext) -> bool:
    if call.tool == "Bash":
        if not facts.commands:
            return False
        if any(r.tool == "Bash" and r.specifier is None for r in allows):
            return True
        patterns = [bash_pattern(r.specifier) for r in allows if r.tool == "Bash" and r.specifier]
        return all(_command_allowed(cmd, patterns, ctx) for cmd in facts.commands)
    if call.tool in WRITE_TOOLS and facts.writes:
        return True  # judged by its writes
    return any(
        _tool_hit(r, call) for r in allows if r.tool not in PATH_RULE_TOOLS or r.specifier is None
    )


def _command_allowed(
    command: SimpleCommand, patterns: Sequence[BashPattern], ctx: RuleContext
) -> bool:
    """A rule naming the whole command covers it; a prefix or a wildcard only when no argument
    names a protected path or a place outside the workspace (`guarded_argument`)."""
    hits = [p for p in patterns if command_matches(p, command.words, strict=True)]
    if any(p.kind == "exact" for p in hits):
        return True
    return bool(hits) and guarded_argument(command, ctx) is None


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
        target = _target(path if path.is_absolute() else ctx.workspace / path, ctx)
        if not _inside(Path(target.written), ctx.root) or not _inside(target.path, ctx.root):
            return value
        if protected_path(Path(target.written), ctx.workspace) is not None:
            return value
    return None


def _write_allowed(target: _Target, allows: Sequence[Rule], ctx: RuleContext) -> bool:
    for rule in allows:
        if rule.tool not in ("Edit", "Write"):
            continue
        if rule.specifier is None or _path_hit(rule.specifier, target, ctx, strict=True):
            return True
    return False


def read_denied(
    path: Path, rules: Iterable[Rule], ctx: RuleContext, *, folder: bool = False
) -> Rule | None:
    """The deny rule that keeps a file from being read, for Grep/Glob to leave it out of
    their results and for `@` attachments; None when it may be read. A `folder` is denied
    when everything inside it is, as when Grep is asked to search it."""
    try:
        target = _target(path, ctx)
    except (OSError, ValueError, RuntimeError):
        return None
    for rule in rules:
        if rule.behavior != "deny" or not rule.applies(ctx.trusted) or rule.tool != "Read":
            continue
        spec = rule.specifier
        if spec is None or _path_hit(spec, target, ctx, strict=False, folder=folder):
            return rule
    return None


# --- rules, then the mode ---------------------------------------------------------------------


@dataclass(frozen=True)
class CallDecision:
    """The final answer for one call: rules, a PreToolUse hook's word, then the mode."""

    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    rule: Rule | None = None  # the rule that decided, if one did
    outside_workspace: bool = False  # never covered by an "allow for the session"
    protected: bool = False  # writes a protected path: never covered either


HookPermission = Literal["allow", "ask", "deny"]


def decide(
    call: Call,
    rules: Iterable[Rule],
    ctx: RuleContext,
    mode: Mode,
    *,
    hook: HookPermission | None = None,
    hook_reason: str = "",
) -> CallDecision:
    """Deny rules and a hook's deny always win; then `bypass` runs everything; plan mode refuses
    what it refuses; ask rules (or a command that cannot be read) ask; a write outside the
    workspace, to a protected path, or to a file known only at run time asks; the rest is
    allowed by allow rules (or a hook's allow) or left to the mode, part by part."""
    try:
        found = evaluate(call, rules, ctx)
    except (OSError, ValueError, RuntimeError) as e:  # a NUL byte, a symlink loop
        return CallDecision("ask", f"could not check the call against the rules ({e})")
    if found.action == "deny":
        return CallDecision("deny", found.reason, found.rule)
    if hook == "deny":
        return CallDecision("deny", hook_reason or "blocked by a PreToolUse hook")
    if mode == "bypass":
        if found.may_be_denied:
            return CallDecision("deny", found.reason, found.rule)
        return CallDecision("allow")
    by_mode = mode_decide(mode, call.kind, [], ctx.workspace)
    if by_mode.action == "deny":
        return CallDecision("deny", by_mode.reason)
    if found.action == "ask":
        return CallDecision("ask", found.reason, found.rule)
    if hook == "ask":
        return CallDecision("ask", hook_reason or "a PreToolUse hook asks for approval")
    return _by_parts(call, found, ctx, mode, by_mode.action, by_mode.reason, hook == "allow")


def _by_parts(  # noqa: PLR0917 - the pieces `decide` has already worked out
    call: Call,
    found: RuleDecision,
    ctx: RuleContext,
    mode: Mode,
    mode_action: Literal["allow", "ask", "deny"],
    mode_reason: str,
    hook_allows: bool,
) -> CallDecision:
    """Writes that always ask, then what allow rules cover; the mode judges the rest."""
    for path in found.writes:
        if not _inside(path, ctx.root):
            return CallDecision(
                "ask", f"writes outside the workspace: {path}", outside_workspace=True
            )
        if (part := protected_path(path, ctx.workspace)) is not None:
            return CallDecision("ask", f"writes the protected path {part}", protected=True)
    if found.unknown_write is not None:
        what = visible(found.unknown_write)
        return CallDecision("ask", f"writes to {what}, a file known only when the command runs")
    if found.action == "allow" or hook_allows:
        return CallDecision("allow", found.reason or "allowed by a PreToolUse hook")
    answers: list[CallDecision] = []
    if not found.call_allowed and not (call.kind == "write" and found.writes):
        answers.append(CallDecision(mode_action, mode_reason))
    for path in found.pending_writes:
        for_write = mode_decide(mode, "write", [path], ctx.workspace)
        answers.append(CallDecision(for_write.action, for_write.reason))
    order = {"deny": 0, "ask": 1, "allow": 2}
    return min(answers, key=lambda d: order[d.action], default=CallDecision("allow"))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


# --- rules offered from an approval -------------------------------------------------------------


def suggest_rules(call: Call, ctx: RuleContext) -> list[str]:
    """Allow rules that would let this call run next time without asking: the approval's
    "allow this command prefix for the session" and "always allow in this project". Empty when
    no rule fits (a command that cannot be read, a write outside the workspace or to a
    protected path): then only "allow once" is offered."""
    try:
        facts = _facts(call, ctx)
    except (OSError, ValueError, RuntimeError):
        return []
    if facts.unreadable is not None:
        return []
    out: list[str] = []
    if call.tool == "Bash":
        commands = _bash_rules(facts, ctx)
        if commands is None:
            return []
        out.extend(commands)
    elif call.tool == WEB_FETCH:
        if call.subject is None:
            return []
        out.append(f"{WEB_FETCH}({call.subject})")  # this domain, not every site
    elif call.tool not in WRITE_TOOLS and call.tool not in READ_TOOLS:
        out.append(call.tool)
    for target in facts.writes:
        path = target.path
        if not _inside(path, ctx.root) or protected_path(path, ctx.workspace) is not None:
            return []
        out.append(f"Edit(./{_edit_spec(call, path.relative_to(ctx.root))})")
    return list(dict.fromkeys(out))


# Folders whose files some tool runs or loads without being asked: an editor's tasks and
# settings (.vscode, .idea), git hook managers (.husky, .githooks), CI (.github, .gitlab,
# .circleci), dev containers, cargo's and yarn's config and plugins, maven's wrapper, direnv,
# a virtual environment's scripts and `.pth` files, installed packages. A rule for such a folder
# would let the next edit run code: only the file edited is offered there, at any depth.
RUNS_ON_ITS_OWN = (
    *(".vscode", ".idea", ".husky", ".githooks", ".github", ".gitlab", ".circleci"),
    *(".devcontainer", ".cargo", ".yarn", ".mvn", ".direnv", ".venv", "node_modules"),
)
_RUNS_ON_ITS_OWN = frozenset(name.casefold() for name in RUNS_ON_ITS_OWN)  # any case (macOS)


def _edit_spec(call: Call, rel: Path) -> str:
    """An edit tool's folder (its neighbours are likely next); the file alone for a
    redirection, for a top-level file (its folder would be the whole workspace: `.envrc`, the
    Makefile) and for a file in a folder whose files run on their own."""
    folder = rel.parent
    if (
        call.tool == "Bash"
        or str(folder) == "."
        or any(part.casefold() in _RUNS_ON_ITS_OWN for part in folder.parts)
    ):
        return _glob_escape(str(rel))
    return _glob_escape(str(folder)) + "/**"


def _bash_rules(facts: _Facts, ctx: RuleContext) -> list[str] | None:
    """A rule for each part of a shell command, or None when one of them cannot have one."""
    if facts.changes_directory:
        # `cd build && rm -rf dist` would be offered `Bash(cd:*)` and `Bash(rm -rf dist)`, which
        # together allow `cd ~ && rm -rf dist`: what the later parts touch depends on the cd.
        return None
    out: list[str] = []
    for command in facts.commands:
        if guarded_argument(command, ctx) is not None or reads_program_from_stdin(command):
            return None
        rule = command_rule(command)
        if rule is None:
            return None
        out.append(rule)
    return out


def _glob_escape(path: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", path)
