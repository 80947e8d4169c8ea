"""A tool whose input schema nests hundreds of levels deep is refused alone; its server's other
tools work. Against a real stdio server (servers/deep_server.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from peri_cli.mcp.deepjson import MARKER, prune
from peri_cli.mcp.schema import SchemaProblem, normalize_schema
from peri_cli.mcp.status import Timeouts
from tests.mcp.helpers import stdio
from tests.mcp.test_mcp_manager import attached, run, running, state


async def test_a_deep_schema_is_refused_alone(tmp_path: Path) -> None:
    started = time.monotonic()
    with running([stdio("deep", "deep_server.py")], timeouts=Timeouts(connect=20)) as manager:
        registry = await attached(manager)
        assert time.monotonic() - started < 15  # answered, not waited out to the timeout
        status, detail = state(manager, "deep")
        assert status == "connected"
        assert "tool 'deep' skipped: its input schema nests more than 64 levels deep" in detail
        assert sorted(registry.deferred) == ["mcp__deep__echo"]
        assert await run(registry, "mcp__deep__echo", {"text": "hi"}, tmp_path) == "echo: hi"


def _nested(depth: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_the_schema_check_counts_depth_without_recursing() -> None:
    assert normalize_schema(_nested(20))["type"] == "object"
    with pytest.raises(SchemaProblem, match="nests more than 64 levels"):
        normalize_schema(_nested(40))  # two JSON levels per schema level


def test_prune_cuts_only_the_deep_parts() -> None:
    text = json.dumps({"a": [1, {"b": 'x]}\\"{'}], "c": {"d": {"e": {"f": 1}}}})
    assert json.loads(prune(text, 10)) == json.loads(text)
    assert json.loads(prune(text, 2)) == {"a": [1, MARKER], "c": {"d": MARKER}}
    deep = "[" * 5000 + "]" * 5000
    assert json.loads(prune(deep, 3)) == [[[MARKER]]]
