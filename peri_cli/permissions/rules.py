"""Judging one call by the rules, then by the permission mode (`decide`).

Rules are judged deny -> ask -> allow (`evaluate`): a deny or ask rule decides when it touches
any part of the call (a Bash rule any part of the command as deny rules see it, a path rule any
file read, searched or written, a name rule the tool). An allow rule covers what it names: a
Bash command part by part (a prefix or wildcard rule only while no argument leads out of the
workspace or to a protected path), a write by its target. A command that cannot be read is never
allowed by a rule; one whose program is known only when it runs asks wherever a Bash deny or ask
rule might name it. What no rule decides, the mode does, part by part. Allow rules from the
workspace's own files apply only in a trusted workspace; deny and ask rules always apply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from peri_cli.base.modes import Mode
from peri_cli.base.textsafe import visible
from peri_cli.permissions.asking import decide as mode_decide
from peri_cli.permissions.asking import protected_path
from peri_cli.permissions.call_facts import (
    Call,
    CallFacts,
    RuleContext,
    Target,
    facts_of,
    guarded_argument,
    inside,
    target_of,
)
from peri_cli.permissions.hosts import host_matches
from peri_cli.permissions.path_match import path_hit
from peri_cli.permissions.rule_syntax import MCP_PREFIX, PATH_RULE_TOOLS, WEB_FETCH, Rule
from peri_cli.permissions.shell_match import (
    BashPattern,
    bash_pattern,
    command_matches,
    raw_mentions,
)
from peri_cli.permissions.shell_syntax import SimpleCommand

# --- matching ---------------------------------------------------------------------------------


def _name_matches(rule_tool: str, call: Call) -> bool:
    """A bare rule name against a call: its tool's name, a whole MCP server, or the Read/Edit
    family (a tool that says it reads, or writes, files)."""
    tool = call.tool
    if rule_tool == tool:
        return True
    if rule_tool == "mcp":  # written `mcp__*`: every MCP tool
        return tool.startswith(MCP_PREFIX)
    if rule_tool.startswith(MCP_PREFIX) and tool.startswith(rule_tool + "__"):
        return rule_tool.count("__") == 1  # mcp__server covers its tools; a tool name only itself
    if rule_tool == "Read":
        return call.reader
    return rule_tool in ("Edit", "Write") and call.writer


def _loose_hit(rule: Rule, call: Call, facts: CallFacts, ctx: RuleContext) -> bool:
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
            if _name_matches(rule.tool, call):
                return True
            return bool(facts.reads if reading else facts.writes or facts.unknown_write)
        if reading:
            return any(path_hit(spec, t, ctx, strict=False) for t in facts.reads) or any(
                path_hit(spec, t, ctx, strict=False, folder=True) for t in facts.searches
            )
        return any(path_hit(spec, t, ctx, strict=False) for t in facts.writes)
    return _tool_hit(rule, call)


def _tool_hit(rule: Rule, call: Call) -> bool:
    if not _name_matches(rule.tool, call):
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
    facts = facts_of(call, ctx)
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


def _unknown_program(call: Call, facts: CallFacts, active: Sequence[Rule]) -> RuleDecision | None:
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


def _call_allowed(call: Call, facts: CallFacts, allows: Sequence[Rule], ctx: RuleContext) -> bool:
    if call.tool == "Bash":
        if not facts.commands:
            return False
        if any(r.tool == "Bash" and r.specifier is None for r in allows):
            return True
        patterns = [bash_pattern(r.specifier) for r in allows if r.tool == "Bash" and r.specifier]
        return all(_command_allowed(cmd, patterns, ctx) for cmd in facts.commands)
    if call.writer and facts.writes:
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


def _write_allowed(target: Target, allows: Sequence[Rule], ctx: RuleContext) -> bool:
    for rule in allows:
        if rule.tool not in ("Edit", "Write"):
            continue
        if rule.specifier is None or path_hit(rule.specifier, target, ctx, strict=True):
            return True
    return False


def read_denied(
    path: Path, rules: Iterable[Rule], ctx: RuleContext, *, folder: bool = False
) -> Rule | None:
    """The deny rule that keeps a file from being read, for Grep/Glob to leave it out of
    their results and for `@` attachments; None when it may be read. A `folder` is denied
    when everything inside it is, as when Grep is asked to search it."""
    try:
        target = target_of(path, ctx)
    except (OSError, ValueError, RuntimeError):
        return None
    for rule in rules:
        if rule.behavior != "deny" or not rule.applies(ctx.trusted) or rule.tool != "Read":
            continue
        spec = rule.specifier
        if spec is None or path_hit(spec, target, ctx, strict=False, folder=folder):
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
        if not inside(path, ctx.root):
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
