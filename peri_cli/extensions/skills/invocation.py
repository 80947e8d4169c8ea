"""A skill put to use: `/<name> [args]` from the user, or the Skill tool's call, becomes the
message the model reads, with Claude Code's argument substitutions."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from peri_cli.extensions.skills.catalog import Skill, SkillCatalog


@dataclass(frozen=True)
class SkillInvocation:
    """A user's `/<name> [args]`: the skill, its arguments and the message to send the model."""

    skill: Skill
    arguments: str
    message: str


def invoke_user_skill(catalog: SkillCatalog, text: str) -> SkillInvocation | None:
    """The message for `/<name> [args]` when `name` is a user-invocable skill, else None (the
    caller then treats the text as usual). Raises SkillError if the skill cannot be read now."""
    if not text.startswith("/"):
        return None
    parts = text[1:].split(maxsplit=1)
    if not parts:
        return None
    skill = catalog.get(parts[0])
    if skill is None or not skill.user_invocable:
        return None
    arguments = parts[1].strip() if len(parts) > 1 else ""
    return SkillInvocation(skill, arguments, skill_message(skill, skill.load_body(), arguments))


def skill_message(skill: Skill, body: str, arguments: str) -> str:
    """What the model reads for a loaded skill: where it lives, then its expanded body."""
    expanded = expand_arguments(
        body.lstrip("\n"),
        arguments,
        directory=skill.directory,
        positional=skill.takes_positional,
        names=skill.arguments,
    )
    return (
        f'Skill "{skill.name}" ({skill.root.label}). Base directory for this skill: '
        f"{skill.directory}\nPaths it mentions are relative to that directory; read them with "
        f"the usual tools.\n\n{expanded}"
    )


def expand_arguments(
    body: str,
    arguments: str,
    *,
    directory: Path,
    positional: bool = False,
    names: Sequence[str] = (),
) -> str:
    """Claude Code's substitutions, in one pass (a value is never expanded again): `$ARGUMENTS`,
    `$ARGUMENTS[N]`, and, when the skill declares arguments, `$N` and `$<name>`; plus
    `${CLAUDE_SKILL_DIR}`. Missing positions become empty. Arguments that no placeholder took
    are appended as `ARGUMENTS: …`, so they are never lost."""
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unbalanced quote: plain words then
        words = arguments.split()
    alternatives = [r"\$\{CLAUDE_SKILL_DIR\}", r"\$ARGUMENTS\[(?P<index>\d+)\]", r"\$ARGUMENTS\b"]
    if positional:
        alternatives.append(r"\$(?P<pos>\d+)")
    if names:
        by_length = sorted(names, key=len, reverse=True)
        named = "|".join(re.escape(n) for n in by_length)
        alternatives.append(rf"\$(?P<named>{named})(?![\w-])")
    used = False

    def substitute(m: re.Match[str]) -> str:
        nonlocal used
        token = m.group(0)
        if token == "${CLAUDE_SKILL_DIR}":
            return str(directory)
        used = True
        if token == "$ARGUMENTS":
            return arguments
        index = m.groupdict().get("index") or m.groupdict().get("pos")
        if index is not None:
            return words[int(index)] if int(index) < len(words) else ""
        named = m.groupdict().get("named")
        i = list(names).index(named) if named is not None else len(words)
        return words[i] if i < len(words) else ""

    expanded = re.sub("|".join(alternatives), substitute, body)
    if arguments and not used:
        expanded = expanded.rstrip("\n") + f"\n\nARGUMENTS: {arguments}"
    return expanded
