"""What /permissions, /hooks, /skills and /mcp show: pure builders of rich tables.

Rules, hook commands, skill descriptions, server names and details come from files and servers,
so every such string goes through `textsafe.visible` into a `Text` (never markup)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.table import Table
from rich.text import Text

from peri_cli.base.textsafe import visible
from peri_cli.extensions.hooks import HookConfig
from peri_cli.extensions.skills.catalog import SkillEntry
from peri_cli.permissions.rule_sources import RuleSet
from peri_cli.permissions.rule_syntax import Rule

MAX_CELL = 200  # characters of a command or description shown in one cell
BEHAVIOR_ORDER = ("deny", "ask", "allow")  # the order rules are evaluated in
_BEHAVIOR_STYLE = {"deny": "bold red", "ask": "bold yellow", "allow": "bold green"}


def safe(text: str, style: str = "") -> Text:
    """File- or server-derived text as a cell: visible, one line, cut when very long."""
    flat = " ".join(visible(text).split())
    if len(flat) > MAX_CELL:
        flat = flat[: MAX_CELL - 1] + "…"
    return Text(flat, style=style)


def source_label(source: str, workspace: Path | None, home: Path | None = None) -> str:
    """A settings file as the user knows it: relative to the workspace, or `~/...`."""
    path = Path(source)
    if not path.is_absolute():
        return source
    for root, prefix in ((workspace, ""), (home, "~/")):
        if root is not None and path.is_relative_to(root):
            return prefix + str(path.relative_to(root))
    return source


def _table(*columns: str) -> Table:
    table = Table(box=None, padding=(0, 2, 0, 0), show_edge=False)
    for i, name in enumerate(columns):
        table.add_column(name, style="bold cyan" if i == 0 else None, overflow="fold")
    return table


def permissions_table(
    rules: RuleSet, *, trusted: bool, workspace: Path | None, home: Path | None = None
) -> Table:
    """Every rule, in the order they are evaluated (deny, ask, allow), with where it came from;
    the workspace's allow rules withheld while it is not trusted say so."""
    table = _table("Rule", "Does", "From", "")
    withheld = set(map(id, rules.withheld(trusted)))
    ordered: list[Rule] = sorted(rules.rules, key=lambda r: BEHAVIOR_ORDER.index(r.behavior))
    for rule in ordered:
        state = Text("withheld: workspace not trusted" if id(rule) in withheld else "", "yellow")
        table.add_row(
            safe(rule.text),
            Text(rule.behavior, style=_BEHAVIOR_STYLE[rule.behavior]),
            safe(source_label(str(rule.source), workspace, home), "dim"),
            state,
        )
    return table


def hooks_table(
    config: HookConfig, *, trusted: bool, workspace: Path | None, home: Path | None = None
) -> Table:
    """Each hook: its event, matcher, command, file, and whether it runs here (trust)."""
    table = _table("Event", "Matcher", "Command", "From", "Runs")
    for hook in config.hooks:
        runs = (
            Text("yes", style="green")
            if hook.applies(trusted)
            else Text("no: workspace not trusted", style="yellow")
        )
        matcher = safe(hook.matcher or "*")
        if hook.condition is not None:  # its `if`, a permission rule
            matcher.append_text(Text(" ").append_text(safe(f"if {hook.condition.text}", "dim")))
        command = safe(hook.command)
        if hook.background:
            command.append(" (async, wakes the agent)" if hook.rewake else " (async)", "dim")
        where = f"plugin {hook.plugin}" if hook.plugin else str(hook.source)
        table.add_row(
            Text(hook.event),
            matcher,
            command,
            safe(source_label(where, workspace, home), "dim"),
            runs,
        )
    return table


_SKILL_STYLE = {"active": "green", "shadowed": "yellow", "broken": "red"}


def skills_table(entries: Sequence[SkillEntry]) -> Table:
    """In force, shadowed (by which root) and broken skills, with source and problems."""
    table = _table("Skill", "Status", "From", "Description")
    for entry in entries:
        status = Text(entry.status, style=_SKILL_STYLE.get(entry.status, ""))
        if entry.shadowed_by:
            status.append(" by ")
            status.append(visible(entry.shadowed_by))
        about = safe(entry.description)
        if entry.argument_hint:
            about = Text.assemble(safe(entry.argument_hint, "dim"), " ", about)
        for problem in entry.problems:
            about.append("\n")
            about.append_text(safe(problem, "red"))
        if entry.status == "active" and not entry.user_invocable:
            about.append("\n")
            about.append("(for the model only: no /command)", style="dim")
        table.add_row(
            safe(entry.name or entry.path.parent.name),
            status,
            Text.assemble(safe(entry.source, "dim"), Text(f" · {entry.scope}", style="dim")),
            about,
        )
    return table


def lines_view(title: str, lines: Sequence[str]) -> Text:
    """A title and one line each (already safe to show, made visible again all the same)."""
    text = Text(title, style="bold")
    for line in lines:
        text.append("\n  ")
        text.append(visible(line))
    return text
