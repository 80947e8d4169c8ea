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
    expanded, used = substitute_arguments(
        body, arguments, directory=directory, positional=positional, names=names
    )
    return with_unused(expanded, arguments, used)


def with_unused(text: str, arguments: str, used: bool) -> str:
    """`text` with `ARGUMENTS: …` appended when no placeholder took the arguments."""
    if arguments and not used:
        return text.rstrip("\n") + f"\n\nARGUMENTS: {arguments}"
    return text


def substitute_arguments(
    body: str,
    arguments: str,
    *,
    directory: Path,
    positional: bool = False,
    names: Sequence[str] = (),
    first: int = 0,
    keep_missing: bool = False,
) -> tuple[str, bool]:
    """`expand_arguments`' substitutions without the appending: (the text, whether any
    placeholder took the arguments). `first`: the number `$N` counts the first word as (a
    skill's `$0`, a custom command's `$1`). `keep_missing`: a position with no word stays as
    written (a custom command's `awk '{print $1}'`, as Claude Code leaves it) instead of empty."""
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

    def position(m: re.Match[str]) -> int:
        if (index := m.groupdict().get("index")) is not None:
            return int(index)
        if (pos := m.groupdict().get("pos")) is not None:
            return int(pos) - first
        named = m.groupdict().get("named")
        return list(names).index(named) if named is not None else len(words)

    def substitute(m: re.Match[str]) -> str:
        nonlocal used
        token = m.group(0)
        if token == "${CLAUDE_SKILL_DIR}":
            return str(directory)
        if token == "$ARGUMENTS":
            used = True
            return arguments
        i = position(m)
        if 0 <= i < len(words):
            used = True
            return words[i]
        used = used or not keep_missing
        return token if keep_missing else ""

    return re.sub("|".join(alternatives), substitute, body), used
