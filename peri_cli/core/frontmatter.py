"""YAML front matter (`---` ... `---` at the top of a Markdown file), parsed safely.

Skills and SubAgent types are repository files written by whoever published them: the front matter
is size-capped, parsed with PyYAML's safe loader, and may not use anchors or aliases (a
"billion laughs" document expands exponentially).
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_FRONT_MATTER = 16 * 1024  # bytes


class FrontMatterError(Exception):
    """Front matter that cannot be used; the message says why, for a one-line report."""


class _NoAliasLoader(yaml.SafeLoader):
    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise FrontMatterError("YAML aliases are not allowed in front matter")
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if getattr(event, "anchor", None):
            raise FrontMatterError("YAML anchors are not allowed in front matter")
        return super().compose_node(parent, index)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(fields, body) of a Markdown text; FrontMatterError when the front matter is unusable."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError("no front matter (the file must start with a line '---')")
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        raise FrontMatterError("the front matter has no closing '---' line")
    raw = "\n".join(lines[1:end])
    if len(raw.encode("utf-8")) > MAX_FRONT_MATTER:
        raise FrontMatterError(f"front matter over {MAX_FRONT_MATTER // 1024} KiB")
    try:
        data = yaml.load(raw, Loader=_NoAliasLoader)  # a SafeLoader that refuses aliases
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(e, "problem", None) or "invalid YAML"
        raise FrontMatterError(f"invalid YAML in front matter{where}: {problem}") from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a mapping of fields")
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return {str(k): v for k, v in data.items()}, body


def name_list(value: Any) -> list[str] | None:
    """A list of names from a YAML list or a comma-separated string; None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    raise FrontMatterError("expected a list of names or a comma-separated string")
