"""Issue 38 end to end: the real `peri -p` against the fake server. A task list, a command that
failed and then passed, one still failing and an edited file survive `/compact` in the first
request after it, and again after that compacted session is resumed; the task list is a
`todo` stream-json event; bad TodoWrite input is a tool error the session carries on from."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.e2e.conftest import Peri, system_text, texts

TODOS = [
    {"content": "Fix the config", "status": "completed", "activeForm": "Fixing the config"},
    {"content": "Make the check pass", "status": "in_progress", "activeForm": "Checking"},
    {"content": "Write the notes", "status": "pending", "activeForm": "Writing the notes"},
]
CHECK = "test -f ready.txt"
LINT = "echo 'lint: E042 bad name' && exit 3"
SUMMARY = "<summary>Working on the config; the check passes now.</summary>"


def run(peri: Peri, *args: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    proc = peri.run(*args, "--output-format", "stream-json", "--permission-mode", "bypass")
    assert proc.returncode == 0, proc.stderr
    return proc, [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def conversation_requests(peri: Peri, seen: int) -> list[dict[str, Any]]:
    return [r["body"] for r in peri.server.requests[seen:] if r["path"] == "/v1/messages"]


def work(peri: Peri) -> str:
    (peri.workspace / "config.ini").write_text("[main]\nname = old\n")
    calls: list[dict[str, Any]] = [
        {"name": "TodoWrite", "input": {"todos": TODOS}},
        {"name": "Bash", "input": {"command": CHECK}},
        {
            "name": "Edit",
            "input": {"file_path": "config.ini", "old_string": "old", "new_string": "new"},
        },
        {"name": "Write", "input": {"file_path": "ready.txt", "content": "yes\n"}},
        {"name": "Bash", "input": {"command": CHECK}},
        {"name": "Bash", "input": {"command": LINT}},
    ]
    peri.server.set_script([*({"tool_calls": [c]} for c in calls), {"text": "Done for now."}])
    _, lines = run(peri, "-p", "fix the config and make the check pass")
    (todo,) = [line for line in lines if line["type"] == "todo"]
    assert todo == {"type": "todo", "todos": TODOS}
    return next(line["session_id"] for line in lines if line.get("subtype") == "init")


def assert_kept(body: dict[str, Any]) -> str:
    (state,) = [t for t in texts(body) if "<working_state>" in t]
    assert "[~] Make the check pass" in state and "Now: Checking" in state
    assert "[x] Fix the config" in state and "[ ] Write the notes" in state
    assert "- ready.txt: created, 1 line" in state
    assert "- config.ini: edited, 2 lines" in state
    assert f"`{CHECK}` → exit 0" in state and f"`{CHECK}` → exit 1" in state
    assert f"Still failing (no later run of it succeeded): `{LINT}` → exit 3" in state
    assert "lint: E042 bad name" in state
    assert "Permission mode: bypass" in state
    return state


def test_the_working_state_survives_compact_and_resume(peri: Peri) -> None:
    session = work(peri)
    peri.server.set_script([{"text": SUMMARY}])
    seen = len(peri.server.requests)
    _, lines = run(peri, "-r", session, "-p", "/compact")
    (compact,) = [line for line in lines if line["type"] == "compact"]
    assert "kept the working state" in compact["detail"]
    (summary_request,) = conversation_requests(peri, seen)
    assert "Peri keeps part of the working state itself" in texts(summary_request)[-1]

    peri.server.set_script([{"text": "Carrying on."}])
    seen = len(peri.server.requests)
    run(peri, "-r", session, "-p", "what next?")
    first = conversation_requests(peri, seen)[0]
    state = assert_kept(first)
    summary_at = next(i for i, t in enumerate(texts(first)) if "Working on the config" in t)
    assert texts(first)[summary_at + 1] == state  # the first message after the summary

    (peri.workspace / "ready.txt").unlink()  # the entry is used as written: nothing re-read
    peri.server.set_script([{"text": "Still here."}])
    seen = len(peri.server.requests)
    run(peri, "-r", session, "-p", "and now?")
    assert assert_kept(conversation_requests(peri, seen)[0]) == state
    peri.server.set_script([{"text": "A copy."}])
    seen = len(peri.server.requests)
    run(peri, "-r", session, "--fork-session", "-p", "in a copy?")
    assert assert_kept(conversation_requests(peri, seen)[0]) == state

    # The task list never entered the system block: one frozen prompt for the whole session.
    bodies = [b for b in peri.model_calls() if b.get("tools")]
    assert len({system_text(b) for b in bodies}) == 1 and "Make the check pass" not in str(
        bodies[-1]["system"]
    )


def test_bad_todo_input_is_a_tool_error_and_the_session_goes_on(peri: Peri) -> None:
    bad = [
        {"todos": "not a list"},
        {"todos": [{**TODOS[0], "status": "blocked"}]},
        {"todos": [TODOS[0]] * 10_000},
        {"todos": [{**TODOS[0], "content": "x" * 200_000}]},
    ]
    script = [{"tool_calls": [{"name": "TodoWrite", "input": b}]} for b in bad]
    peri.server.set_script([*script, {"text": "Gave up on the list."}])
    _, lines = run(peri, "-p", "plan it")
    results = [line for line in lines if line["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True] * 4
    assert all(r["content"].startswith("Invalid input for TodoWrite: todos") for r in results)
    assert all(len(r["content"]) < 1_000 for r in results)
    assert not [line for line in lines if line["type"] == "todo"]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "Gave up on the list."


def test_todo_tool_false_drops_it(peri: Peri) -> None:
    settings = peri.home / ".peri" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"todoTool": False}))
    peri.server.set_script([{"text": "hi"}])
    run(peri, "-p", "hello")
    (body,) = peri.model_calls()
    names = [t["name"] for t in body["tools"]]
    assert "TodoWrite" not in names and "Read" in names
    assert "TodoWrite" not in body["system"][0]["text"]  # nor does the base prompt name it


def test_files_a_subagent_changed_and_one_bash_deleted_are_kept(peri: Peri) -> None:
    (peri.workspace / "gone.txt").write_text("old\n")
    agent = {"prompt": "kid: write the file", "description": "writer"}
    peri.server.set_script(
        [
            {"when": "main", "tool_calls": [{"name": "Agent", "input": agent}]},
            {
                "when": "kid:",
                "tool_calls": [
                    {"name": "Write", "input": {"file_path": "kid.txt", "content": "a\nb\n"}}
                ],
            },
            {"when": "kid:", "text": "wrote it"},
            {"when": "main", "tool_calls": [{"name": "Bash", "input": {"command": "rm gone.txt"}}]},
            {"when": "main", "text": "done"},
        ]
    )
    _, lines = run(peri, "-p", "main: tidy up")
    session = next(line["session_id"] for line in lines if line.get("subtype") == "init")
    peri.server.set_script([{"text": SUMMARY}])
    run(peri, "-r", session, "-p", "/compact")
    peri.server.set_script([{"text": "Carrying on."}])
    seen = len(peri.server.requests)
    run(peri, "-r", session, "-p", "what next?")
    (state,) = [t for t in texts(conversation_requests(peri, seen)[0]) if "<working_state>" in t]
    assert "- gone.txt: deleted\n" in state
    files = state.split("Files this session changed")[1].split("\n\n")[0]
    assert files.index("gone.txt") < files.index("kid.txt")  # newest first
    assert "- kid.txt: created by SubAgent " in files and "(general), 2 lines" in files
