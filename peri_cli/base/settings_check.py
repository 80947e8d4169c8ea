"""Reading one settings file and checking it: a JSON object of bounded size and nesting, unknown
keys dropped with a warning, and errors that name the file, the dotted key, what was expected and
the value (briefly: a long one may be a secret, so it is described, not echoed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from peri_cli.base.first_look import MAX_SETTINGS_BYTES
from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.base.textsafe import visible

MAX_NESTING = 64  # far deeper than any real settings file; deeper is an attack or a bug


class SettingsError(Exception):
    """A settings file or variable that cannot be used; the message is one line for the user."""


def read_json_object(path: Path, read: str | SafeReadError | None = None) -> dict[str, Any] | None:
    """The file's top-level object, None when the file does not exist. `read`: what reading
    it already gave (its text or the refusal), so it is not read twice."""
    try:
        if isinstance(read, SafeReadError):
            raise read
        text = read if read is not None else read_text(path, max_bytes=MAX_SETTINGS_BYTES)
    except SafeReadError as e:
        if e.missing:
            return None
        raise SettingsError(str(e)) from e
    # An empty file (e.g. just `touch`ed) means "no settings", not a syntax error.
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SettingsError(
            f"{path}: invalid JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from e
    except RecursionError as e:
        raise SettingsError(f"{path}: nested more than {MAX_NESTING} levels deep") from e
    except ValueError as e:  # e.g. an integer literal with more digits than Python converts
        raise SettingsError(f"{path}: invalid JSON: {e}") from e
    if _deeper_than(data, MAX_NESTING):
        raise SettingsError(f"{path}: nested more than {MAX_NESTING} levels deep")
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: expected a JSON object at the top level, got {kind_of(data)}")
    return data


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether objects and lists nest more than `limit` levels (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return False


def drop_unknown(
    raw: dict[str, Any], model: type[BaseModel], path: Path, prefix: str, warnings: list[str]
) -> dict[str, Any]:
    """`raw` without the keys `model` does not know (each warned about), recursing into sections."""
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        dotted = f"{prefix}{key}"
        info = model.model_fields.get(key)
        if info is None:
            warnings.append(f"{path}: unknown key {visible(dotted)}; ignored")
            continue
        section = section_type(info.annotation)
        if section is not None and isinstance(value, dict):
            kept[key] = drop_unknown(value, section, path, f"{dotted}.", warnings)
        else:
            kept[key] = value
    return kept


def section_type(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def describe(err: Any) -> str:
    """One pydantic error as `dotted.key: expected ..., got ...`."""
    loc = ""
    for part in err["loc"]:
        loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
    kind: str = err["type"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    expected = {
        "int_type": "expected an integer",
        "float_type": "expected a number",
        "bool_type": "expected true or false",
        "string_type": "expected a string",
        "list_type": "expected a list",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "model_attributes_type": "expected an object",
        "literal_error": f"expected {ctx.get('expected', 'one of the allowed values')}",
        "greater_than": f"must be greater than {ctx.get('gt')}",
        "greater_than_equal": f"must be at least {ctx.get('ge')}",
        "less_than": f"must be less than {ctx.get('lt')}",
        "less_than_equal": f"must be at most {ctx.get('le')}",
        "finite_number": "expected a finite number",
    }.get(kind)
    if expected is None:
        msg: str = err["msg"]
        expected = msg[:1].lower() + msg[1:]
    return f"{loc or '(top level)'}: {expected}, got {show(err.get('input'))}"


def show(value: Any) -> str:
    """A short rendering of a bad value; long ones are described, not echoed (they may be keys)."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    if len(shown) <= 32:
        return shown
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    return kind_of(value)


def kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__
