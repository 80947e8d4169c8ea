"""The permission policy of a session: the mode, the permission rules (settings files, the
command line, and what the user allowed during the session) and the workspace's trust.

Every call is judged here once, on its real target (never a wrapper): deny rules, a PreToolUse
hook's word, the mode, ask rules, then allow rules (`rules.decide`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peri_cli.base.modes import Mode
from peri_cli.base.tool import ToolKind
from peri_cli.permissions.call_facts import RuleContext, describe_call
from peri_cli.permissions.rule_sources import RuleSet
from peri_cli.permissions.rule_suggest import suggest_rules
from peri_cli.permissions.rule_syntax import Rule, RuleError, RuleSource, parse_rule
from peri_cli.permissions.rulefile import RuleFileError, add_rules
from peri_cli.permissions.rules import CallDecision, HookPermission, read_denied
from peri_cli.permissions.rules import decide as decide_call
from peri_cli.permissions.sandboxing import SandboxGate, wants_out

Decision = CallDecision
_SESSION = RuleSource("session")


@dataclass
class PermissionPolicy:
    mode: Mode
    workspace: Path
    rules: RuleSet = field(default_factory=RuleSet)
    trusted: bool = False
    home: Path = field(default_factory=Path.home)
    # Granted until the turn ends, per agent (None: the main one): a SubAgent's skill grants
    # nothing to its parent or siblings, and the parent's turn ending takes nothing from it.
    turn_rules: dict[str | None, list[Rule]] = field(default_factory=dict)
    # The Bash sandbox: a sandboxed command may run without asking, leaving it always asks.
    sandbox: SandboxGate = field(default_factory=lambda: SandboxGate(active=False))

    def context(self) -> RuleContext:
        return RuleContext(self.workspace, self.trusted, self.home)

    def decide(
        self,
        tool: str,
        kind: ToolKind,
        tool_input: Mapping[str, Any],
        writes: Sequence[Path] = (),
        *,
        hook: HookPermission | None = None,
        hook_reason: str = "",
        agent: str | None = None,
    ) -> CallDecision:
        call = describe_call(tool, kind, tool_input, writes, self.workspace)
        rules = [*self.rules.rules, *self.turn_rules.get(agent, ())]
        ctx = self.context()
        decision = decide_call(call, rules, ctx, self.mode, hook=hook, hook_reason=hook_reason)
        return self.sandbox.judge(
            decision, call, rules, ctx, self.mode, hook, unsandboxed=wants_out(tool, tool_input)
        )

    def read_denied(self, path: Path) -> bool:
        """Whether a Read deny rule keeps `path` from the model (Grep and Glob drop it)."""
        if not any(r.behavior == "deny" and r.tool == "Read" for r in self.rules.rules):
            return False
        return read_denied(path, self.rules.rules, self.context()) is not None

    def suggestions(
        self, tool: str, kind: ToolKind, tool_input: Mapping[str, Any], writes: Sequence[Path]
    ) -> list[str]:
        """Rules that would let this call run without asking (the approval's offers)."""
        call = describe_call(tool, kind, tool_input, writes, self.workspace)
        return suggest_rules(call, self.context())

    def allow_for_session(self, rules: Sequence[str]) -> None:
        for text in rules:
            try:
                self.rules.add(parse_rule(text, "allow", _SESSION))
            except RuleError:
                continue

    def grant_for_turn(
        self, rules: Sequence[str], from_workspace: bool = False, agent: str | None = None
    ) -> None:
        """Allow `rules` until `end_turn` (a skill's `allowed-tools` while it runs); a
        repository's skill is honoured only in a trusted workspace."""
        if from_workspace and not self.trusted:
            return
        for text in rules:
            try:
                self.turn_rules.setdefault(agent, []).append(parse_rule(text, "allow", _SESSION))
            except RuleError:
                continue

    def end_turn(self, agent: str | None = None) -> None:
        self.turn_rules.pop(agent, None)

    def allow_in_project(self, rules: Sequence[str]) -> str | None:
        """Save `rules` to `.peri/settings.local.json` and apply them now; the problem, if any."""
        self.allow_for_session(rules)
        try:
            add_rules(self.workspace, rules)
        except (RuleFileError, OSError) as e:
            return f"could not save the rule to .peri/settings.local.json: {e}"
        return None
