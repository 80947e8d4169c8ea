"""Where rules come from: settings files' `permissions`, the command line's `--allowedTools` and
`--disallowedTools`, all of them gathered in a `RuleSet`; and the trust detector for allow rules
in the workspace's own files, which apply only once it is trusted (deny and ask rules always do).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from peri_cli.base.settings import SettingsLayer
from peri_cli.base.textsafe import visible
from peri_cli.permissions.rule_syntax import (
    Behavior,
    Rule,
    RuleError,
    RuleSource,
    parse_rule,
    split_cli_rules,
)
from peri_cli.permissions.trust import Loosening, WorkspaceFiles


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
