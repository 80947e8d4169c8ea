"""How the Bash sandbox changes a decision (CONTRACT.md §6, §10): a sandboxed command that no
deny or ask rule names runs without asking in `default` and `accept-edits`; a call that asks to
leave the sandbox (`dangerouslyDisableSandbox`) is refused or always asked, in every mode.

The rules still decide first (`rules.decide`); this only turns their answer for Bash calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from peri_cli.base.modes import Mode
from peri_cli.permissions.rules import (
    Call,
    CallDecision,
    HookPermission,
    Rule,
    RuleContext,
    RuleError,
    RuleSource,
    evaluate,
    parse_rule,
)
from peri_cli.permissions.rules import decide as decide_call

BASH = "Bash"
UNSANDBOXED_FIELD = "dangerouslyDisableSandbox"
_AUTO_MODES: frozenset[Mode] = frozenset({"default", "accept-edits"})
_SETTING = RuleSource("user", "sandbox.excludedCommands")


def excluded_rules(entries: Sequence[str]) -> list[Rule]:
    """`excludedCommands` entries as Bash allow rules: `docker` covers `docker ps`, and an
    entry already written as a rule pattern (`npm run:*`, `Bash(make *)`) is taken as it is."""
    rules: list[Rule] = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        if not text.startswith(f"{BASH}("):
            pattern = text if ("*" in text) else f"{text}:*"
            text = f"{BASH}({pattern})"
        try:
            rules.append(parse_rule(text, "allow", _SETTING))
        except RuleError:
            continue
    return rules


@dataclass(frozen=True)
class SandboxGate:
    """The sandbox as the permission policy sees it: on (and available) or not, and the settings
    that change what asks."""

    active: bool
    auto_allow: bool = True
    allow_unsandboxed: bool = True
    excluded: tuple[Rule, ...] = ()

    def is_excluded(self, command: str, ctx: RuleContext) -> bool:
        """Whether `command` is one of `excludedCommands` (it runs outside, approved as usual)."""
        if not self.excluded:
            return False
        try:
            found = evaluate(Call(BASH, "execute", command=command), self.excluded, ctx)
        except (OSError, ValueError, RuntimeError):
            return False
        return found.call_allowed

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


def wants_out(tool: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether a call asks to run outside the sandbox."""
    return tool == BASH and tool_input.get(UNSANDBOXED_FIELD) is True
