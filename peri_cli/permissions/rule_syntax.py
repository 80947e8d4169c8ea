"""Permission rules as written, in Claude Code's syntax: `Tool`, `Tool(specifier)`, `mcp__server`.

`Bash(git diff:*)` allows a command that starts with those words, `Bash(npm run test)` exactly
that command, `Bash(npm run *)` a wildcard; `Read(./secrets/**)` and `Edit(src/**)` are path
globs relative to the workspace; `WebFetch(domain:HOST)` a site; `Agent(...)` and `Skill(...)`
a glob on the SubAgent's type or the skill's name; `mcp__server__tool`, `mcp__server` and a
bare tool name match by name. Each rule keeps where it came from (`RuleSource`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from peri_cli.permissions.shell_match import PatternError, bash_pattern

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")  # the order they are judged in
Scope = Literal["user", "project", "local", "cli", "session"]
WORKSPACE_SCOPES: frozenset[str] = frozenset({"project", "local"})

# Rules that take a path: a Read rule covers every call that reads files (a tool whose `reads()`
# names them, `@` attachments, shell redirections); an Edit or Write rule every call that writes
# them (a tool whose `writes()` names them, shell redirections).
PATH_RULE_TOOLS = frozenset({"Read", "Edit", "Write"})
SUBJECT_FIELDS = {"Agent": "subagent_type", "Skill": "name"}  # Tool(glob) on this input field
WEB_FETCH = "WebFetch"  # WebFetch(domain:HOST): its subject is the URL's host

_TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
MCP_PREFIX = "mcp__"


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
    star = name.endswith("*") and name.startswith(MCP_PREFIX)
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
