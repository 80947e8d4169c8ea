"""ExitPlanMode and AskUserQuestion in the editor (CONTRACT.md §11): the plan through
session/request_permission, questions through elicitation/create (form) or a single-choice
permission question, else an error result."""

from __future__ import annotations

import json
from typing import Any

from acp import text_block

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri

PLAN = "# Plan\n\n1. Write `out.txt`."
DB = {
    "question": "Which database?",
    "header": "DB",
    "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres"}],
}
CACHE = {
    "question": "Which caches?",
    "header": "Cache",
    "options": [{"label": "Redis"}, {"label": "Memory"}],
    "multiSelect": True,
}


def _results(peri: Peri) -> list[dict[str, Any]]:
    calls = [b for b in peri.model_calls() if b and "messages" in b]
    return [
        b
        for m in calls[-1]["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


async def _prompt(peri: Peri, editor: Editor, *flags: str, forms: bool = False) -> None:
    async with running(peri, editor, *flags, forms=forms) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])


async def test_an_approved_plan_switches_the_mode_and_the_turn_goes_on(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]},
            {"tool_calls": [{"name": "Write", "input": {"file_path": "out.txt", "content": "x"}}]},
            {"text": "done"},
        ]
    )
    editor.answers = ["plan_accept_edits"]
    await _prompt(peri, editor, "--permission-mode", "plan")
    (asked,) = editor.asked  # the Write in accept-edits asked nothing
    ids = [o.option_id for o in asked["options"]]
    assert ids == ["plan_accept_edits", "plan_default", "plan_keep"]
    assert [o.kind for o in asked["options"]] == ["allow_once", "allow_once", "reject_once"]
    assert asked["tool_call"].content[0].content.text == PLAN
    assert (peri.workspace / "out.txt").read_text() == "x"
    assert "accept-edits" in [u.current_mode_id for u in editor.of("current_mode_update")]


async def test_keep_planning_tells_the_model_and_stays_in_plan_mode(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]},
            {"text": "revising"},
        ]
    )
    editor.answers = ["plan_keep"]
    await _prompt(peri, editor, "--permission-mode", "plan")
    (result,) = _results(peri)
    assert result["is_error"] is True and "keep planning" in json.dumps(result)
    assert not editor.of("current_mode_update")


async def test_one_single_choice_question_is_a_permission_question(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [DB]}}]},
            {"text": "ok"},
        ]
    )
    editor.answers = ["answer_1"]
    await _prompt(peri, editor)
    (asked,) = editor.asked
    assert [o.name for o in asked["options"]] == ["SQLite", "Postgres", "Dismiss"]
    (result,) = _results(peri)
    assert not result.get("is_error") and '\\"Which database?\\"=\\"Postgres\\"' in json.dumps(
        result
    )


async def test_questions_go_as_a_form_when_the_editor_offers_forms(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [DB, CACHE]}}]},
            {"text": "ok"},
        ]
    )
    editor.forms = [{"q0": "SQLite", "q1": ["Redis", "Memory"], "q0_other": ""}]
    await _prompt(peri, editor, forms=True)
    assert not editor.asked
    (elicited,) = editor.elicited
    schema = elicited["mode"].requested_schema
    assert set(schema.properties) == {"q0", "q0_other", "q1", "q1_other"}
    assert [o.const for o in schema.properties["q0"].one_of] == ["SQLite", "Postgres"]
    text = json.dumps(_results(peri))
    assert '\\"Which database?\\"=\\"SQLite\\"' in text
    assert '\\"Which caches?\\"=\\"Redis, Memory\\"' in text


async def test_several_questions_without_forms_are_an_error_result(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [DB, CACHE]}}]},
            {"text": "ok"},
        ]
    )
    await _prompt(peri, editor)
    assert not editor.asked and not editor.elicited
    (result,) = _results(peri)
    assert result["is_error"] is True and "cannot show these questions" in json.dumps(result)
