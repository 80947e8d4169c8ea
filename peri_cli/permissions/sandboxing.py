"""How the Bash sandbox changes a decision (CONTRACT.md §6, §10): a sandboxed command that no
deny or ask rule names runs without asking in `default` and `accept-edits`, unless Peri's own
check sees it writing a protected path (that asks, sandbox or not); a call that asks to leave the
sandbox (`dangerouslyDisableSandbox`) is refused or always asked, in every mode.

The rules still decide first (`rules.decide`); this only turns their answer for Bash calls.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peri_cli.base.modes import Mode
from peri_cli.permissions.asking import protected_path
from peri_cli.permissions.call_facts import Call, RuleContext, facts_of
from peri_cli.permissions.rule_syntax import Rule
from peri_cli.permissions.rules import CallDecision, HookPermission
from peri_cli.permissions.rules import decide as decide_call
from peri_cli.permissions.shell_syntax import ShellParseError, parse

BASH = "Bash"
UNSANDBOXED_FIELD = "dangerouslyDisableSandbox"
_AUTO_MODES: frozenset[Mode] = frozenset({"default", "accept-edits"})


def excluded_rules(entries: Sequence[str]) -> list[tuple[str, ...]]:
    """`excludedCommands` entries as word prefixes: `docker` and `docker:*` cover `docker ps`;
    an entry written as a rule (`Bash(npm run:*)`) is read the same way."""
    out: list[tuple[str, ...]] = []
    for entry in entries:
        text = entry.strip()
        if text.startswith(f"{BASH}(") and text.endswith(")"):
            text = text[len(BASH) + 1 : -1]
        text = text.removesuffix("*").removesuffix(":").strip()
        try:
            words = tuple(shlex.split(text))
        except ValueError:
            continue
        if words:
            out.append(words)
    return out


@dataclass(frozen=True)
class SandboxGate:
    """The sandbox as the permission policy sees it: on (and available) or not, and the settings
    that change what asks."""

    active: bool
    auto_allow: bool = True
    allow_unsandboxed: bool = True
    excluded: tuple[tuple[str, ...], ...] = ()

    def is_excluded(self, command: str, ctx: RuleContext) -> bool:
        """Whether a part of `command` is one of `excludedCommands`: it runs outside the sandbox,
        approved as usual (so a match anywhere means more asking, never less)."""
        if not self.excluded:
            return False
        try:
            script = parse(command)
        except ShellParseError:
            return False
        for simple in script.commands:
            words = tuple(w.value for w in simple.words[simple.assignment_count :])
            if any(words[: len(prefix)] == prefix for prefix in self.excluded):
                return True
        return False

    def sandboxed(self, tool: str, tool_input: Mapping[str, Any], ctx: RuleContext) -> bool:
        """Whether this call runs inside the sandbox."""
        if not self.active or tool != BASH:
            return False
        command = tool_input.get("command")
        if tool_input.get(UNSANDBOXED_FIELD) is True or not isinstance(command, str):
            return False
        return not self.is_excluded(command, ctx)

    def judge(  # noqa: PLR0917 - the decision and everything it was made from
        self,
        decision: CallDecision,
        call: Call,
        rules: Sequence[Rule],
        ctx: RuleContext,
        mode: Mode,
        hook: HookPermission | None,
        *,
        unsandboxed: bool = False,
    ) -> CallDecision:
        """`decision` as the sandbox changes it; `unsandboxed`: the call asks to run outside."""
        if not self.active or call.tool != BASH or call.command is None:
            return decision
        if unsandboxed:
            return self._outside(decision)
        if self.is_excluded(call.command, ctx) or not self.auto_allow:
            return decision
        if decision.action != "ask" or mode not in _AUTO_MODES or hook == "ask":
            return decision
        if decision.rule is not None and decision.rule.behavior == "ask":
            return decision  # an ask rule wins
        if (protected := _protected_write(decision, call, ctx)) is not None:
            return protected  # asked without the sandbox: asked with it too
        # A deny rule that may name what runs (a program known only at run time) makes bypass
        # deny: then the sandbox does not answer for the user either.
        if decide_call(call, rules, ctx, "bypass", hook=hook).action != "allow":
            return decision
        return CallDecision("allow", "runs in the sandbox")

    def _outside(self, decision: CallDecision) -> CallDecision:
        if decision.action == "deny":
            return decision
        if not self.allow_unsandboxed:
            return CallDecision(
                "deny",
                "running a command outside the sandbox is turned off "
                "(sandbox.allowUnsandboxedCommands is false); run it without "
                f"{UNSANDBOXED_FIELD}",
            )
        # Asked every time: `protected` keeps the approval from offering a rule that remembers it.
        return dataclasses.replace(
            decision,
            action="ask",
            reason="runs the command OUTSIDE the sandbox, with all of your rights",
            protected=True,
        )


def _protected_write(decision: CallDecision, call: Call, ctx: RuleContext) -> CallDecision | None:
    """The question about a write Peri's own check sees going to a protected path (a
    redirection into `.mcp.json`), also when the decision names another reason first (a write
    outside the workspace), or None."""
    if decision.protected:
        return decision
    try:
        writes = facts_of(call, ctx).writes
    except (OSError, ValueError, RuntimeError):
        return None  # (the rules asked about what they could not read)
    for target in writes:
        for path in (Path(target.written), target.path):
            if (part := protected_path(path, ctx.workspace)) is not None:
                return CallDecision("ask", f"writes the protected path {part}", protected=True)
    return None


def wants_out(tool: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether a call asks to run outside the sandbox."""
    return tool == BASH and tool_input.get(UNSANDBOXED_FIELD) is True
