"""`peri -p` in its three formats, byte for byte as before it was rewritten over `peri_cli.sdk`.

The goldens in `golden_sdk/` were recorded from the code before the rewrite (commit 9e39d1c):
`PERI_RECORD_GOLDEN=/path/to/old/tree` runs that tree's `peri_cli` instead and writes them;
`PERI_UPDATE_GOLDEN=1` writes them from this tree after an intended change of the output (with
`tests/e2e/test_headless_golden.py`: one command for every golden file, AGENTS.md). What differs
from run to run (the session id, the temporary workspace's path) is normalized, and the `init`
line's tools list is a checked placeholder (`golden_tools.py`): a new tool changes no file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.golden_tools import tools_placeholder

GOLDEN = Path(__file__).parent / "golden_sdk"
UPDATE = os.environ.get("PERI_UPDATE_GOLDEN") == "1"
USAGE = {"input_tokens": 100, "output_tokens": 7}

SCENARIOS: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "text": ([{"text": "Hello there.", "usage": USAGE}], []),
    "tools": (
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}], "usage": USAGE},
            {
                "tool_calls": [
                    {
                        "name": "Edit",
                        "input": {"file_path": "a.txt", "old_string": "one", "new_string": "1"},
                    },
                    {"name": "Bash", "input": {"command": "cat a.txt"}},
                ],
                "usage": USAGE,
            },
            {"text": "Done editing.", "usage": USAGE},
        ],
        ["--permission-mode", "bypass"],
    ),
    "denied": (
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": "b.txt", "content": "x"}}]},
            {"text": "I could not write it.", "usage": USAGE},
        ],
        [],
    ),
    "unknown-tool": (
        [
            {"tool_calls": [{"name": "Nope", "input": {}}], "usage": USAGE},
            {"text": "ok then", "usage": USAGE},
        ],
        [],
    ),
    "provider-error": ([{"status": 400, "message": "bad request here"}], []),
    "max-turns": (
        [
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.txt"}}], "usage": USAGE},
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.md"}}], "usage": USAGE},
        ],
        ["--max-turns", "1"],
    ),
}
FORMATS = ("text", "json", "stream-json")


def _normalize(text: str, peri: Peri) -> str:
    text = text.replace(str(peri.workspace.resolve()), "<WS>").replace(str(peri.home), "<HOME>")
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<ID>", text)
    text = re.sub(r'"stable_prefix_share": [0-9.]+', '"stable_prefix_share": <S>', text)
    text = re.sub(r'"(duration(?:_api)?_ms)": \d+', r'"\1": <MS>', text)
    text = re.sub(r'"total_cost_usd": [0-9.e-]+', '"total_cost_usd": <USD>', text)  # of <N>
    return tools_placeholder(re.sub(r'"input_tokens": \d+', '"input_tokens": <N>', text))


def _compare(got: str, path: Path, old_tree: str | None) -> None:
    """`got` against the golden file, or written to it (recording an old tree, or updating)."""
    if old_tree or UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got)
        return
    assert got == path.read_text()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_headless_output_unchanged(peri: Peri, name: str, fmt: str) -> None:
    script, flags = SCENARIOS[name]
    (peri.workspace / "a.txt").write_text("one\ntwo\n")
    peri.server.set_script(script)
    old_tree = os.environ.get("PERI_RECORD_GOLDEN")
    if old_tree:
        peri.extra_env["PYTHONPATH"] = old_tree
    done = peri.run("-p", f"scenario {name}", "--output-format", fmt, *flags)
    got = f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    got = _normalize(got, peri)
    _compare(got, GOLDEN / f"{name}.{fmt}.txt", old_tree)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_credentials_unchanged(peri: Peri, fmt: str) -> None:
    old_tree = os.environ.get("PERI_RECORD_GOLDEN")
    peri.extra_env |= {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    if old_tree:
        peri.extra_env["PYTHONPATH"] = old_tree
    done = peri.run("-p", "hi", "--output-format", fmt)
    got = _normalize(
        f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}", peri
    )
    _compare(got, GOLDEN / f"no-credentials.{fmt}.txt", old_tree)
