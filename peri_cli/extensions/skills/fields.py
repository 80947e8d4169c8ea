"""A skill's front matter fields, checked: a bad name or description refuses the skill, a bad
optional field is a warning and its default."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from peri_cli.extensions.skills.catalog import Skill, SkillProblem, SkillRoot
from peri_cli.extensions.skills.reading import Refused

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
# A title where a name belongs ("Writing Hookify Rules", in a Claude Code plugin): the skill is
# known by its folder's name instead, as Claude Code knows it.
_TITLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._:-]{0,63}")
_KNOWN_FIELDS = frozenset(
    {
        "name",
        "description",
        "allowed-tools",
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "arguments",
    }
)


def skill_from_fields(
    fields: dict[str, Any],
    path: Path,
    root: SkillRoot,
    warnings: list[SkillProblem],
    confined_to: Path | None,
) -> Skill:
    def warn(message: str) -> None:
        warnings.append(SkillProblem(path, root.label, message, skipped=False))

    name = fields.get("name", path.parent.name)
    folder = path.parent.name
    if isinstance(name, str) and " " in name and _TITLE.fullmatch(name) and _NAME.fullmatch(folder):
        name = folder  # silently, as Claude Code: its own plugins do this
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise Refused(
            f"invalid name {name!r}: use letters, digits, '-', '_', '.', ':' (at most 64)"
        )
    description = fields.get("description")
    if not isinstance(description, str):
        what = "missing" if description is None else "not text"
        raise Refused(f"the required field 'description' is {what}")
    if not description.strip():
        raise Refused("the required field 'description' is empty")
    return Skill(
        name=name,
        description=description.strip(),
        path=path,
        root=root,
        allowed_tools=word_list(fields.get("allowed-tools"), "allowed-tools", warn),
        disable_model_invocation=_flag(fields, "disable-model-invocation", False, warn),
        user_invocable=_flag(fields, "user-invocable", True, warn),
        argument_hint=hint_text(fields.get("argument-hint"), warn),
        arguments=word_list(fields.get("arguments"), "arguments", warn),
        extra={k: v for k, v in fields.items() if k not in _KNOWN_FIELDS},
        confined_to=confined_to,
    )


def _flag(fields: dict[str, Any], key: str, default: bool, warn: Callable[[str], None]) -> bool:
    value = fields.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    warn(f"'{key}' should be true or false, not {value!r}; using {str(default).lower()}")
    return default


def word_list(value: object, key: str, warn: Callable[[str], None]) -> tuple[str, ...]:
    """A YAML list, or a string split on commas and on spaces outside parentheses (so
    `Bash(git add:*) Read` is two entries)."""
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    if isinstance(value, str):
        return tuple(_split_outside_parens(value))
    warn(f"'{key}' should be a list or a comma-separated string; ignored")
    return ()


def _split_outside_parens(text: str) -> list[str]:
    words, current, depth = [], "", 0
    for ch in text:
        if ch in ",\n\t " and depth == 0:
            if current.strip():
                words.append(current.strip())
            current = ""
            continue
        depth += (ch == "(") - (ch == ")" and depth > 0)
        current += ch
    if current.strip():
        words.append(current.strip())
    return words


def hint_text(value: object, warn: Callable[[str], None]) -> str:
    """`argument-hint: [issue]` is a YAML list; the author meant the text `[issue]`."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return " ".join(f"[{v}]" for v in value)
    warn("'argument-hint' should be text; ignored")
    return ""
