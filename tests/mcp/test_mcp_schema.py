"""A server's input schema checks the model's arguments; the schema itself is untrusted."""

from __future__ import annotations

import socket

import pytest

from peri_cli.mcp.schema import SchemaProblem, compile_check, normalize_schema

SCHEMA = {
    "type": "object",
    "properties": {
        "timezone": {"type": "string"},
        "count": {"type": "integer", "minimum": 1},
        "mode": {"enum": ["a", "b"]},
    },
    "required": ["timezone"],
    "additionalProperties": False,
}


def test_valid_input_passes() -> None:
    check, note = compile_check(SCHEMA)
    assert note is None
    assert check({"timezone": "UTC", "count": 2, "mode": "a"}) is None


def test_problems_name_the_field() -> None:
    check, _ = compile_check(SCHEMA)
    assert check({}) == "input: 'timezone' is a required property"
    assert check({"timezone": 3}) == "timezone: 3 is not of type 'string'"
    assert check({"timezone": "UTC", "count": 0}) == "count: 0 is less than the minimum of 1"
    many = check({"timezone": 1, "count": "x", "mode": "c", "extra": 1})
    assert many is not None and many.count(";") == 2  # at most three problems, one line


def test_huge_values_are_not_echoed_whole() -> None:
    check, _ = compile_check(SCHEMA)
    problem = check({"timezone": "x" * 10_000})
    assert problem is None
    problem = check({"timezone": ["y" * 10_000]})
    assert problem is not None and len(problem) < 300


def test_schema_shapes() -> None:
    assert normalize_schema({"properties": {}}) == {"type": "object", "properties": {}}
    with pytest.raises(SchemaProblem, match='describes "string"'):
        normalize_schema({"type": "string"})
    with pytest.raises(SchemaProblem, match="not a JSON object"):
        normalize_schema(["type", "object"])


def test_an_invalid_schema_checks_only_the_shape() -> None:
    check, note = compile_check({"type": "object", "properties": {"a": {"type": "nonsense"}}})
    assert note is not None and "invalid input schema" in note
    assert check({"a": 1}) is None


def test_a_remote_ref_is_never_fetched() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.3)
        port = listener.getsockname()[1]
        schema = {
            "type": "object",
            "properties": {"a": {"$ref": f"http://127.0.0.1:{port}/schema.json"}},
        }
        check, _ = compile_check(schema)
        problem = check({"a": 1})
        assert problem is not None and "could not be checked" in problem
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody connected
