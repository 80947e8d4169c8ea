"""Plan mode, ExitPlanMode and AskUserQuestion through the real `peri -p` (CONTRACT.md §11)."""

from __future__ import annotations

import json
from typing import Any

from peri_cli.context.plan_mode import PLAN_MODE_TEXT
from peri_cli.session.transcript_file import load
from tests.e2e.conftest import Peri, system_text

PLAN = "# Plan\n\n1. Add `hello.txt`.\n2. Check it."


def whole_system(body: dict[str, Any]) -> str:
    if "system" in body:
        return "\n".join(block["text"] for block in body["system"])
    return str(body["messages"][0]["content"])


def test_plan_mode_text_is_in_requests_only_while_in_plan_mode(peri: Peri, provider: str) -> None:
    peri.provider = provider
    peri.server.set_script([{"text": "I will look first."}, {"text": "Now I can edit."}])
    first = peri.json("-p", "look around", "--permission-mode", "plan")
    assert first["is_error"] is False
    second = peri.json("-p", "go on", "-c", "--permission-mode", "default")
    assert second["session_id"] == first["session_id"]
    planned, after = peri.model_calls()
    assert PLAN_MODE_TEXT in whole_system(planned)
    assert PLAN_MODE_TEXT not in whole_system(after)
    # never in the frozen part: the same bytes in both requests
    frozen = load(peri.transcript(first["session_id"])).header.snapshot.system
    assert PLAN_MODE_TEXT not in frozen
    assert system_text(planned).startswith(frozen) and system_text(after).startswith(frozen)


def test_headless_plan_mode_ends_with_the_plan_and_changes_nothing(peri: Peri) -> None:
    peri.server.set_script(
        [
            {
                "text": "Here is my plan.",
                "tool_calls": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}],
            },
            {
                "tool_calls": [
                    {"name": "Write", "input": {"file_path": "hello.txt", "content": "hi"}}
                ]
            },
            {"text": "done"},
        ]
    )
    result = peri.json("-p", "add hello.txt", "--permission-mode", "plan")
    assert result["is_error"] is False, result
    assert result["result"] == PLAN
    assert len(peri.model_calls()) == 1  # the run ended at the plan
    assert not (peri.workspace / "hello.txt").exists()


def test_headless_ask_user_question_is_an_error_result_no_one_can_answer(peri: Peri) -> None:
    question = {
        "question": "Which database?",
        "header": "DB",
        "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres"}],
        "multiSelect": False,
    }
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [question]}}]},
            {"text": "I chose SQLite."},
        ]
    )
    done = peri.run("-p", "set up a db", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    (tool_result,) = [e for e in lines if e["type"] == "tool_result"]
    assert tool_result["is_error"] is True
    assert "No one can answer" in tool_result["content"]
    assert lines[-1]["result"] == "I chose SQLite."


def test_a_bad_ask_user_question_input_gets_a_clear_tool_error(peri: Peri) -> None:
    bad = {"questions": [{"question": "Which?", "header": "X", "options": [{"label": "only"}]}]}
    peri.server.set_script(
        [{"tool_calls": [{"name": "AskUserQuestion", "input": bad}]}, {"text": "ok"}]
    )
    result = peri.json("-p", "ask me")
    assert result["is_error"] is False
    sent = json.dumps(peri.model_calls()[1]["messages"][-1])
    assert "Invalid input for AskUserQuestion" in sent and "questions.0.options" in sent
