"""`peri -p --json-schema JSON|@FILE` end to end: the real process answers through the
StructuredOutput tool; a bad schema is one line on stderr and exit 2."""

from __future__ import annotations

import json
import os

import pytest

from tests.e2e.conftest import Peri

SCHEMA = {
    "type": "object",
    "properties": {"files": {"type": "integer"}},
    "required": ["files"],
}


def answer(value: object) -> dict[str, object]:
    return {"tool_calls": [{"name": "StructuredOutput", "input": value}]}


def test_json_schema_from_a_file_gives_structured_output(peri: Peri) -> None:
    (peri.workspace / "schema.json").write_text(json.dumps(SCHEMA))
    peri.server.set_script([{"text": "three"}, answer({"files": 3}), {"text": "done"}])
    result = peri.json("-p", "count the files", "--json-schema", "@schema.json")
    assert result["structured_output"] == {"files": 3}
    assert result["subtype"] == "success" and result["is_error"] is False
    first = peri.model_calls()[0]
    (tool,) = [t for t in first["tools"] if t["name"] == "StructuredOutput"]
    assert tool["input_schema"] == SCHEMA


def test_text_output_prints_the_json_value(peri: Peri) -> None:
    peri.server.set_script([answer({"files": 7}), {"text": "done"}])
    done = peri.run("-p", "count", "--json-schema", json.dumps(SCHEMA))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"files": 7}


def test_the_stream_json_result_line_carries_it(peri: Peri) -> None:
    peri.server.set_script([answer({"files": 1}), {"text": "done"}])
    schema = json.dumps(SCHEMA)
    done = peri.run("-p", "count", "--json-schema", schema, "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["structured_output"] == {"files": 1}
    (use,) = [e for e in lines if e["type"] == "tool_use"]
    assert use["name"] == "StructuredOutput"


def test_retries_spent_exit_1_with_the_subtype(peri: Peri) -> None:
    peri.server.set_script([answer({"files": "x"}), {"text": "a"}, {"text": "b"}])
    done = peri.run("-p", "count", "--json-schema", json.dumps(SCHEMA), "--output-format", "json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["is_error"] and result["subtype"] == "error_max_structured_output_retries"
    assert "structured_output" not in result


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        ("{not json", "--json-schema: not JSON"),
        ('{"type": "nope"}', "--json-schema: not a valid JSON Schema"),
        ('{"type": "string"}', "must describe an object"),
        ("@missing.json", "--json-schema @missing.json: cannot read"),
    ],
)
def test_a_bad_schema_is_one_line_and_exit_2(peri: Peri, flag: str, says: str) -> None:
    done = peri.run("-p", "count", "--json-schema", flag)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("peri: error: ") and says in lines[0], lines
    assert "Traceback" not in done.stderr
    assert peri.model_calls() == []


def test_json_schema_without_p_is_a_usage_error(peri: Peri) -> None:
    done = peri.run("--json-schema", json.dumps(SCHEMA))
    assert done.returncode == 2
    assert "--json-schema needs -p" in done.stderr


def test_a_fifo_or_huge_schema_file_is_refused_not_waited_on(peri: Peri) -> None:
    """`@FILE` read as every config file is: a FIFO is never opened, a huge file never loaded."""
    os.mkfifo(peri.workspace / "pipe.json")
    with (peri.workspace / "huge.json").open("wb") as f:
        f.truncate(100 << 20)
    for name, says in (("pipe.json", "not a regular file"), ("huge.json", "is larger than")):
        done = peri.run("-p", "count", "--json-schema", f"@{name}", timeout=30)
        assert done.returncode == 2, done.stderr
        assert f"--json-schema @{name}: cannot read" in done.stderr and says in done.stderr
    assert peri.model_calls() == []
