"""The permission policy of a session: the mode, the permission rules (settings files, the
command line, and what the user allowed during the session) and the workspace's trust.

Every call is judged here once, on its real target (never a wrapper): deny rules, a PreToolUse
hook's word, the mode, ask rules, then allow rules (`rules.decide`); the sandbox's word on a
command (`sandboxing`); and a call that would hand over a hidden path asks, whatever else said
yes (`hidden`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.modes import Mode
from peri_cli.base.textsafe import visible
from peri_cli.permissions.call_facts import Call, RuleContext
from peri_cli.permissions.hidden import HiddenPaths
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
    # What no tool hands over without asking (the default secrets, `denyRead`).
    hidden: HiddenPaths = field(default_factory=HiddenPaths)

    def context(self) -> RuleContext:
        return RuleContext(self.workspace, self.trusted, self.home)

    def decide(
        self,
        call: Call,
        *,
        hook: HookPermission | None = None,
        hook_reason: str = "",
        agent: str | None = None,
    ) -> CallDecision:
        """Judge one call (`call_facts.describe_call` makes it from the tool)."""
        rules = [*self.rules.rules, *self.turn_rules.get(agent, ())]
        ctx = self.context()
        decision = decide_call(call, rules, ctx, self.mode, hook=hook, hook_reason=hook_reason)
        unsandboxed = wants_out(call.tool, call.tool_input)
        decision = self.sandbox.judge(
            decision, call, rules, ctx, self.mode, hook, unsandboxed=unsandboxed
        )
        return self._hidden_asks(call, decision)

    def _hidden_asks(self, call: Call, decision: CallDecision) -> CallDecision:
        """A call that reads or searches inside a hidden path asks, in every mode; asked each
        time (`protected`: no rule is offered that would remember it)."""
        found = self.hidden.first_read([*call.reads, *call.searches])
        if found is None or decision.action == "deny":
            return decision
        path, hidden = found
        return dataclasses.replace(
            decision,
            action="ask",
            reason=f"reads {visible(str(path))}: a hidden path (under {visible(str(hidden))})",
            protected=True,
        )

    def read_denied(self, path: Path) -> bool:
        """Whether a Read deny rule or a hidden path keeps `path` from the model (Grep and Glob
        drop it from what they found)."""
        return self._read_denied(path, self.hidden)

    def read_filter(self, call: Call) -> Callable[[Path], bool]:
        """`read_denied` for one call: a hidden path the user let it read (a search inside
        `~/.ssh` they approved) is handed over to it, nothing else hidden is."""
        approved = [h for p in (*call.reads, *call.searches) if (h := self.hidden.covering(p))]
        if not approved:
            return self.read_denied
        hidden = HiddenPaths(self.hidden.paths, (*self.hidden.revealed, *approved))
        return lambda path: self._read_denied(path, hidden)

    def _read_denied(self, path: Path, hidden: HiddenPaths) -> bool:
        if hidden.covering(path) is not None:
            return True
        if not any(r.behavior == "deny" and r.tool == "Read" for r in self.rules.rules):
            return False
        return read_denied(path, self.rules.rules, self.context()) is not None

    def suggestions(self, call: Call) -> list[str]:
        """Rules that would let this call run without asking (the approval's offers)."""
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
