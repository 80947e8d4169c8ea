"""Checking a model's arguments against a server's JSON input schema, once per call.

The schema comes from the server, so it is untrusted: a `$ref` never makes Peri fetch anything
(an empty reference registry), and a schema that is itself invalid degrades to "an object".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_ERRORS = 3
MAX_MESSAGE = 200
# Deeper schemas are refused before the validator (which recurses) sees them; a real one nests a
# handful of levels, and `deepjson` cuts a message's far deeper parts to a marker this refuses.
MAX_SCHEMA_DEPTH = 64

# `validate(raw)` returns None when `raw` fits, else the problems in one line.
Check = Callable[[dict[str, Any]], str | None]


class SchemaProblem(ValueError):
    """The server's schema cannot be used as given."""


def normalize_schema(schema: Any) -> dict[str, Any]:
    """The schema as providers want it (an object at the root), or SchemaProblem."""
    if not isinstance(schema, dict):
        raise SchemaProblem("its input schema is not a JSON object")
    if nesting_depth(schema) > MAX_SCHEMA_DEPTH:
        raise SchemaProblem(f"its input schema nests more than {MAX_SCHEMA_DEPTH} levels deep")
    kind = schema.get("type")
    if kind is None:
        return {"type": "object", **schema}
    if kind != "object":
        raise SchemaProblem(f"its input schema describes {json.dumps(kind)}, not an object")
    return schema


def nesting_depth(value: Any) -> int:
    """How many objects and arrays deep `value` nests, counted without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def compile_check(schema: dict[str, Any], *, root: str = "input") -> tuple[Check, str | None]:
    """A checker for `schema`, and a note when the schema is broken (then only the shape counts).
    Each problem reads `path: message`, `root` naming the path of the value itself."""
    import jsonschema
    import referencing
    from jsonschema.exceptions import SchemaError, relevance

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        note = f"invalid input schema ({short_message(e.message)}); only the shape is checked"
        return _object_only, note
    validator = cls(schema, registry=referencing.Registry())

    def check(raw: dict[str, Any]) -> str | None:
        try:
            errors = sorted(validator.iter_errors(raw), key=relevance)
        except Exception as e:  # an unresolvable $ref, a pathological pattern
            return f"the input could not be checked against the schema ({short_message(str(e))})"
        if not errors:
            return None
        return "; ".join(_describe(e, root) for e in errors[:MAX_ERRORS])

    return check, None


def _object_only(raw: dict[str, Any]) -> str | None:
    return None if isinstance(raw, dict) else "the input must be a JSON object"


def _describe(error: Any, root: str) -> str:
    path = ".".join(str(p) for p in error.absolute_path) or root
    return f"{path}: {short_message(error.message)}"


def short_message(text: str) -> str:
    """`text` on one line, at most MAX_MESSAGE characters."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"
