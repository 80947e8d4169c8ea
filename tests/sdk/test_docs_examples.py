"""The examples in docs/sdk.md run, as written, against the fake server (base URL and key from the
environment, as a user's would be)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.fakeserver import FakeServer
from tests.sdk.programs import run_program

DOC = Path(__file__).resolve().parents[2] / "docs" / "sdk.md"


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def _run(code: str, tmp_path: Path, server: FakeServer, **env: str) -> str:
    return run_program(["-c", code], tmp_path, server, **env)


def test_the_doc_has_seven_examples() -> None:
    assert len(_examples()) == 7


def test_the_hook_callback_example_builds_its_options(server: FakeServer, tmp_path: Path) -> None:
    code = _examples()[0] + "\nprint(sorted(options.hooks))\n"
    assert _run(code, tmp_path, server) == "['PreToolUse']\n"


def test_one_prompt(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "It is a demo.", "usage": {"output_tokens": 5}}])
    repo = tmp_path / "repo"
    repo.mkdir()
    out = _run(_examples()[1], tmp_path, server, REPO=str(repo))
    assert out == "It is a demo. 5\n"


def test_conversation_with_a_permission_callback(server: FakeServer, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("teh readme\n")
    server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "rm -rf /tmp/x"}}]},
            {
                "tool_calls": [
                    {
                        "name": "Edit",
                        "input": {
                            "file_path": "README.md",
                            "old_string": "teh",
                            "new_string": "the",
                        },
                    }
                ]
            },
            {"text": "Fixed."},
            {"tool_calls": [{"name": "Bash", "input": {"command": "git status"}}]},
            {"text": "Here is the diff."},
        ]
    )
    out = _run(_examples()[2], tmp_path, server, REPO=str(repo))
    assert (repo / "README.md").read_text() == "the readme\n"
    assert "tool: Bash\ntool: Edit\nFixed.\ntool: Bash\nHere is the diff.\nsession " in out
    bodies = [r["body"] for r in server.requests if r["status"] == 200]
    assert "only git commands in this job" in str(bodies[1]["messages"])


def test_ported_from_the_claude_agent_sdk(server: FakeServer, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    server.set_script([{"text": "Nothing yet."}])
    out = _run(_examples()[3], tmp_path, server, REPO=str(repo))
    assert out == "Nothing yet.\nsuccess 1\n"


@pytest.mark.parametrize("count", [3])
def test_batch_over_repositories(server: FakeServer, tmp_path: Path, count: int) -> None:
    repos = []
    for i in range(count):
        repo = tmp_path / f"repo{i}"
        repo.mkdir()
        repos.append(str(repo))
    server.set_script([{"text": "f, g and h"} for _ in range(count)])
    out = _run(_examples()[4], tmp_path, server, REPOS=os.pathsep.join(repos))
    assert out.splitlines() == [f"repo{i}: f, g and h" for i in range(count)]
    for i in range(count):
        assert (tmp_path / f".peri-repo{i}" / "projects").is_dir()


def test_tools_of_your_own(server: FakeServer, tmp_path: Path) -> None:
    (example,) = [e for e in _examples() if "create_sdk_mcp_server" in e]
    call = {"tool_name": "mcp__calc__add", "params": {"a": 2, "b": 3.5}}
    server.set_script(
        [
            {"tool_calls": [{"name": "SearchExtraTools", "input": {"query": "add"}}]},
            {"tool_calls": [{"name": "ExecuteExtraTool", "input": call}]},
            {"text": "5.5, says the calculator."},
        ]
    )
    assert _run(example, tmp_path, server) == "5.5, says the calculator.\n"
    bodies = [r["body"] for r in server.requests if r["status"] == 200]
    assert "'text': '5.5'" in str(bodies[2]["messages"][-1])


def test_its_own_prompt_agents_and_tools(server: FakeServer, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    call = {"prompt": "look at src/", "description": "review", "subagent_type": "reviewer"}
    server.set_script(
        [
            {"when": "reviewer", "tool_calls": [{"name": "Agent", "input": call}]},
            {"when": "look at src/", "text": "no bugs"},
            {"when": "reviewer", "text": "The reviewer found no bugs."},
        ]
    )
    out = _run(_examples()[6], tmp_path, server, REPO=str(repo))
    assert out == "The reviewer found no bugs.\n"
    parent, child, _ = [r["body"] for r in server.requests if r["status"] == 200]
    assert [t["name"] for t in parent["tools"]] == ["Read", "Glob", "Grep", "Agent"]
    assert parent["system"][0]["text"].rstrip().endswith("Be brief.")
    assert [t["name"] for t in child["tools"]] == ["Read", "Grep", "Glob"]
    assert child["model"] == "claude-haiku-4-5"
