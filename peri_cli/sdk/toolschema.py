"""The input schema of an `@tool` in the Claude Agent SDK's three forms, as JSON Schema: a map of
argument names to Python types (`{"a": int}`: every one required), a TypedDict class (its
`NotRequired` / `total=False` keys optional), or a JSON Schema object, passed through. A form
that is none of these is refused at decoration, naming the tool and the argument."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from peri_cli.sdk.errors import PeriError

_SIMPLE: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}
_KNOWN = (
    "str, int, float, bool, list, dict, list[...], dict[str, ...], X | None, Literal[...], "
    "a TypedDict"
)


class SchemaError(PeriError):
    """An `@tool` input schema Peri cannot read (exit code 2, bad usage)."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"@tool {tool!r}: input_schema {message}", 2)


def json_schema(tool: str, schema: object) -> dict[str, Any]:
    """`schema` in any of the three forms as a JSON Schema object; SchemaError otherwise."""
    if isinstance(schema, type) and is_typeddict(schema):
        return _typed_dict(tool, schema)
    if not isinstance(schema, Mapping):
        raise SchemaError(
            tool,
            f"must be a dict of argument names to types, a TypedDict or a JSON Schema, "
            f"not {type(schema).__name__}",
        )
    if "type" in schema or "properties" in schema:
        return _passed_through(tool, schema)
    properties = {}
    for name, hint in schema.items():
        if not isinstance(name, str) or not name:
            raise SchemaError(tool, f"key {name!r}: argument names are non-empty strings")
        properties[name] = _hint(tool, name, hint)
    return {"type": "object", "properties": properties, "required": list(properties)}


def _passed_through(tool: str, schema: Mapping[Any, Any]) -> dict[str, Any]:
    """A JSON Schema as given; it must be JSON (it is sent to the model) and an object."""
    try:
        copied = json.loads(json.dumps(schema))
    except (TypeError, ValueError) as e:
        raise SchemaError(tool, f"looks like a JSON Schema but is not JSON ({e})") from None
    if copied.get("type", "object") != "object":
        raise SchemaError(tool, f'must describe an object (type "object"), not {copied["type"]!r}')
    copied.setdefault("type", "object")
    return dict(copied)


def _typed_dict(tool: str, cls: type) -> dict[str, Any]:
    try:
        hints = get_type_hints(cls, include_extras=True)
    except Exception as e:  # a forward reference that names nothing
        raise SchemaError(tool, f"{cls.__name__}: cannot read its annotations ({e})") from None
    # (`__required_keys__` misses a `NotRequired` written as a string, under
    # `from __future__ import annotations`: the evaluated hint says it)
    keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset(hints))
    properties = {name: _hint(tool, name, hint) for name, hint in hints.items()}
    required = [name for name, hint in hints.items() if _marked(hint, name in keys)]
    return {"type": "object", "properties": properties, "required": required}


def _marked(hint: Any, default: bool) -> bool:
    """Whether a TypedDict key is required: its `Required` / `NotRequired`, else `default`."""
    while get_origin(hint) is typing.Annotated:
        hint = get_args(hint)[0]
    if get_origin(hint) is typing.Required:
        return True
    return False if get_origin(hint) is typing.NotRequired else default


def _hint(tool: str, name: str, hint: Any) -> dict[str, Any]:
    """One argument's type as JSON Schema."""
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    if isinstance(hint, type) and is_typeddict(hint):
        return _typed_dict(tool, hint)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Required, typing.NotRequired, typing.Annotated):
        return _hint(tool, name, args[0])
    if origin is list and len(args) == 1:
        return {"type": "array", "items": _hint(tool, name, args[0])}
    if origin is dict and len(args) == 2 and args[0] is str:
        return {"type": "object", "additionalProperties": _hint(tool, name, args[1])}
    if origin is Literal and all(isinstance(a, str | int | float | bool) for a in args):
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:  # Optional[X]: X (whether it may be left out is `required`'s say)
            return _hint(tool, name, rest[0])
        return {"anyOf": [_hint(tool, name, a) for a in rest]}
    shown = hint.__name__ if isinstance(hint, type) else repr(hint)
    raise SchemaError(tool, f"argument {name!r}: {shown} is not a type Peri knows ({_KNOWN})")
