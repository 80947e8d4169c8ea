"""Allow rules offered from an approval ("allow this command prefix for the session", "always
allow in this project"), for any tool: a Bash command's parts get theirs from `shell_suggest`, a
write its folder or the file alone, WebFetch its domain, other tools their name. None is offered
for what no rule should cover: a command that cannot be read or changes directory, an argument
outside the workspace or on a protected path.
"""

from __future__ import annotations

from pathlib import Path

from peri_cli.permissions.asking import protected_path
from peri_cli.permissions.call_facts import (
    Call,
    CallFacts,
    RuleContext,
    facts_of,
    guarded_argument,
    inside,
)
from peri_cli.permissions.path_match import glob_escape
from peri_cli.permissions.rule_syntax import WEB_FETCH
from peri_cli.permissions.shell_suggest import command_rule, reads_program_from_stdin


def suggest_rules(call: Call, ctx: RuleContext) -> list[str]:
    """Allow rules that would let this call run next time without asking: the approval's
    "allow this command prefix for the session" and "always allow in this project". Empty when
    no rule fits (a command that cannot be read, a write outside the workspace or to a
    protected path): then only "allow once" is offered."""
    try:
        facts = facts_of(call, ctx)
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
    elif not call.writer and not call.reader:
        out.append(call.tool)
    for target in facts.writes:
        path = target.path
        if not inside(path, ctx.root) or protected_path(path, ctx.workspace) is not None:
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
        return glob_escape(str(rel))
    return glob_escape(str(folder)) + "/**"


def _bash_rules(facts: CallFacts, ctx: RuleContext) -> list[str] | None:
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
