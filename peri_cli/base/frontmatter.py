"""YAML front matter (`---` ... `---` at the top of a Markdown file), parsed safely.

Skills and SubAgent types are repository files written by whoever published them: the front matter
is size-capped and scanned for anchors, aliases and deep nesting before PyYAML's safe loader builds
anything (a "billion laughs" document expands exponentially), and the lines of not-quite-YAML found
in the wild (`description: Use when: ...`) are read as the text they show.
"""

from __future__ import annotations

import re
from typing import Any

MAX_FRONT_MATTER_BYTES = 32 * 1024
MAX_YAML_DEPTH = 32
_TOO_LARGE = f"front matter is larger than {MAX_FRONT_MATTER_BYTES // 1024} KiB"


class FrontMatterError(Exception):
    """Front matter (or a file holding it) that cannot be used; the message says why in a line.
    `syntax`: the YAML did not parse, as opposed to being refused."""

    def __init__(self, message: str, *, syntax: bool = False) -> None:
        super().__init__(message)
        self.syntax = syntax


_OPENING = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
_CLOSING = re.compile(rb"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


def locate_front_matter(data: bytes, *, complete: bool) -> tuple[int, int]:
    """(end of the front matter, start of the body) in `data`; `complete` when `data` is the whole
    file, else it is a prefix that may have been cut at the front-matter cap."""
    opening = _OPENING.match(data)
    if opening is None:
        raise FrontMatterError("no YAML front matter (the file must start with a line '---')")
    closing = _CLOSING.search(data, opening.end())
    if closing is None:
        if not complete and len(data) > MAX_FRONT_MATTER_BYTES:
            raise FrontMatterError(
                f"front matter is larger than {MAX_FRONT_MATTER_BYTES // 1024} KiB"
            )
        raise FrontMatterError("front matter is not closed (no line '---' after it)")
    if closing.start() > MAX_FRONT_MATTER_BYTES:
        raise FrontMatterError(_TOO_LARGE)
    return closing.start(), closing.end()


def parse_fields(text: str) -> dict[str, Any]:
    """The front matter as a mapping. Front matter in the wild is often not quite YAML
    (`description: Use when: …`, `argument-hint: [a] [b]`): when the whole fails, each top-level
    line that fails alone is read as the text it shows, and the whole is tried once more."""
    try:
        return _safe_yaml(text)
    except FrontMatterError as first:
        if not first.syntax:
            raise  # a tag, an alias, deep nesting or a wrong shape is refused as it stands
        fixed = _quote_bad_lines(text)
        if fixed == text:
            raise
        try:
            return _safe_yaml(fixed)
        except FrontMatterError:
            raise first from first.__cause__


_TOP_LEVEL = re.compile(r"(?P<key>[A-Za-z_][\w-]*):[ \t]+(?P<value>[^\s|>'\"].*?)[ \t]*\r?")


def _quote_bad_lines(text: str) -> str:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _TOP_LEVEL.fullmatch(line)
        if m is None:
            continue
        try:
            yaml.load(line, Loader=loader)
        except (yaml.scanner.ScannerError, yaml.parser.ParserError, RecursionError):
            value = m.group("value").replace("'", "''")
            lines[i] = f"{m.group('key')}: '{value}'"
    return "\n".join(lines)


def _safe_yaml(text: str) -> dict[str, Any]:
    """PyYAML's safe loader, after an event scan that refuses anchors, aliases and deep nesting
    before any node is built, so a "billion laughs" never expands."""
    import yaml  # lazy: a session without skills never pays for it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it: 20x
    try:
        depth = 0
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise FrontMatterError("YAML anchors and aliases are not allowed in front matter")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise FrontMatterError(
                        f"front matter is nested more than {MAX_YAML_DEPTH} levels deep"
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        loaded: object = yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        if "nesting depth" in str(getattr(e, "problem", "")):  # libyaml's own limit
            raise FrontMatterError("front matter is nested too deeply") from e
        syntax = isinstance(e, yaml.scanner.ScannerError | yaml.parser.ParserError)
        raise FrontMatterError(
            f"invalid YAML front matter: {_yaml_reason(e)}", syntax=syntax
        ) from e
    except RecursionError as e:
        raise FrontMatterError("front matter is nested too deeply") from e
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise FrontMatterError(
            f"front matter must be a mapping of fields, not {type(loaded).__name__}"
        )
    return {str(k): v for k, v in loaded.items()}


def _yaml_reason(e: Exception) -> str:
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    mark = getattr(e, "problem_mark", None)
    where = f" (line {mark.line + 2})" if mark is not None else ""  # +1 for 1-based, +1 for ---
    return f"{problem}{where}"


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(fields, body) of a whole Markdown file's text."""
    data = text.encode("utf-8", errors="surrogateescape")
    end, body_start = locate_front_matter(data, complete=True)
    front = data[:end].decode("utf-8", errors="replace").removeprefix("\ufeff")
    fields = parse_fields(front.partition("\n")[2])
    return fields, data[body_start:].decode("utf-8", errors="replace").lstrip("\n")


def name_list(value: Any) -> list[str] | None:
    """A list of names from a YAML list or a comma-separated string; None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    raise FrontMatterError("expected a list of names or a comma-separated string")
