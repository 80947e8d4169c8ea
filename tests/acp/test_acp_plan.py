"""The task list as ACP's `plan` session update (issue 38): each TodoWrite that sets a list sends
every entry's content and status, with priority "medium" (ACP requires one, Peri has none)."""

from __future__ import annotations

from acp import text_block

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri

TODOS = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
]


async def test_todo_write_sends_a_plan_update(peri: Peri, editor: Editor) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "TodoWrite", "input": {"todos": TODOS}}]},
            {"tool_calls": [{"name": "TodoWrite", "input": {"todos": "not a list"}}]},
            {"text": "planned"},
        ]
    )
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("plan")])
    assert answer.stop_reason == "end_turn"
    (plan,) = editor.of("plan")  # the bad second call sends none
    entries = [(e.content, e.status, e.priority) for e in plan.entries]
    assert entries == [
        ("Read the code", "completed", "medium"),
        ("Fix the bug", "in_progress", "medium"),
    ]


async def test_a_loaded_session_shows_its_plan_again(peri: Peri, editor: Editor) -> None:
    peri.server.set_script(
        [{"tool_calls": [{"name": "TodoWrite", "input": {"todos": TODOS}}]}, {"text": "ok"}]
    )
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("plan")])
    editor.clear()
    async with running(peri, editor) as conn:
        await conn.load_session(
            cwd=str(peri.workspace), mcp_servers=[], session_id=session.session_id
        )
    (plan,) = editor.of("plan")
    assert [e.content for e in plan.entries] == ["Read the code", "Fix the bug"]
