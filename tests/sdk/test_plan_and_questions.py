"""ExitPlanMode and AskUserQuestion answered by `can_use_tool` (CONTRACT.md §11), against the
fake server: the approval switches the mode within the turn, a denial keeps planning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peri_cli.base.questions import PLAN_QUESTION
from peri_cli.context.plan_mode import PLAN_MODE_TEXT
from peri_cli.sdk import (
    Allow,
    Deny,
    PeriClient,
    PermissionContext,
    PermissionUpdate,
    ResultEvent,
    ToolResultEvent,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for

PLAN = "# Plan\n\n1. Write `out.txt`."
QUESTION = {
    "question": "Which database?",
    "header": "DB",
    "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres"}],
    "multiSelect": False,
}


def _plan_then_write(server: FakeServer) -> None:
    server.set_script(
        [
            {"tool_calls": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]},
            {"tool_calls": [{"name": "Write", "input": {"file_path": "out.txt", "content": "x"}}]},
            {"text": "Done."},
        ]
    )


def _system(body: dict[str, Any]) -> str:
    return json.dumps(body["system"])


async def test_allow_with_set_mode_switches_mode_and_goes_on_in_the_same_turn(
    server: FakeServer, tmp_path: Path
) -> None:
    asked: list[tuple[str, dict[str, Any], PermissionContext]] = []

    async def answer(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        asked.append((name, tool_input, ctx))
        return Allow(updated_permissions=[PermissionUpdate(type="setMode", mode="acceptEdits")])

    _plan_then_write(server)
    options = options_for(server, tmp_path, permission_mode="plan", can_use_tool=answer)
    async with PeriClient(options) as client:
        await client.send("do it")
        events = [e async for e in client.events()]
        assert client.mode == "accept-edits"
        assert client.approved_plan == PLAN
    assert [(n, i) for n, i, _ in asked] == [("ExitPlanMode", {"plan": PLAN})]  # Write: no ask
    ctx = asked[0][2]
    assert ctx.asking is not None and ctx.asking.plan == PLAN
    assert ctx.asking.questions[0].question == PLAN_QUESTION
    assert (tmp_path / "ws" / "out.txt").read_text() == "x"
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "Done."
    first, second, _ = model_calls(server)
    assert PLAN_MODE_TEXT in _system(first) and PLAN_MODE_TEXT not in _system(second)
    assert first["system"][0] == second["system"][0]  # the frozen part never moved


async def test_plain_allow_switches_to_default_so_the_edit_asks(
    server: FakeServer, tmp_path: Path
) -> None:
    asked: list[str] = []

    async def answer(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        asked.append(name)
        return Allow()

    _plan_then_write(server)
    options = options_for(server, tmp_path, permission_mode="plan", can_use_tool=answer)
    async with PeriClient(options) as client:
        await client.send("do it")
        [e async for e in client.events()]
        assert client.mode == "default"
    assert asked == ["ExitPlanMode", "Write"]


async def test_deny_keeps_planning_and_tells_the_model_why(
    server: FakeServer, tmp_path: Path
) -> None:
    async def answer(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Deny:
        return Deny("add a test step")

    server.set_script(
        [
            {"tool_calls": [{"name": "ExitPlanMode", "input": {"plan": PLAN}}]},
            {"text": "I will revise it."},
        ]
    )
    options = options_for(server, tmp_path, permission_mode="plan", can_use_tool=answer)
    async with PeriClient(options) as client:
        await client.send("do it")
        events = [e async for e in client.events()]
        assert client.mode == "plan"
        assert client.approved_plan is None
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.is_error and "keep planning" in result.content
    assert "add a test step" in result.content
    assert PLAN_MODE_TEXT in _system(model_calls(server)[1])


async def test_ask_user_question_answered_through_updated_input(
    server: FakeServer, tmp_path: Path
) -> None:
    seen: list[PermissionContext] = []

    async def answer(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        seen.append(ctx)
        question = tool_input["questions"][0]["question"]
        return Allow(updated_input={**tool_input, "answers": {question: "SQLite"}})

    server.set_script(
        [
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
            {"text": "SQLite it is."},
        ]
    )
    options = options_for(server, tmp_path, can_use_tool=answer)
    async with PeriClient(options) as client:
        await client.send("set up a db")
        events = [e async for e in client.events()]
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert not result.is_error
    assert '"Which database?"="SQLite"' in result.content
    asking = seen[0].asking
    assert asking is not None and [o.label for o in asking.questions[0].options] == [
        "SQLite",
        "Postgres",
    ]


async def test_ask_user_question_denied_reaches_the_model(
    server: FakeServer, tmp_path: Path
) -> None:
    async def answer(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Deny:
        return Deny("decide yourself")

    server.set_script(
        [
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
            {"text": "ok"},
        ]
    )
    options = options_for(server, tmp_path, can_use_tool=answer)
    async with PeriClient(options) as client:
        await client.send("set up a db")
        events = [e async for e in client.events()]
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.is_error and "declined" in result.content and "decide yourself" in result.content


async def test_the_approved_plan_is_in_the_first_request_after_compact_and_a_resume(
    server: FakeServer, tmp_path: Path
) -> None:
    async def answer(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        return Allow(updated_input={"mode": "acceptEdits"})

    _plan_then_write(server)
    options = options_for(server, tmp_path, permission_mode="plan", can_use_tool=answer)
    async with PeriClient(options) as client:
        await client.send("do it")
        _ = [e async for e in client.events()]
        server.set_script([{"text": "<summary>Planned, then wrote out.txt.</summary>"}])
        await client.send("/compact")
        _ = [e async for e in client.events()]
        server.set_script([{"text": "Next."}, {"text": "Again."}])
        seen = len(model_calls(server))
        await client.send("what next?")
        _ = [e async for e in client.events()]
        session = client.session_id
    after = json.dumps(model_calls(server)[seen]["messages"])
    assert "Approved plan:" in after and json.dumps(PLAN)[1:-1] in after
    resumed = options_for(server, tmp_path, resume=session, can_use_tool=answer)
    async with PeriClient(resumed) as client:
        seen = len(model_calls(server))
        await client.send("and now?")
        _ = [e async for e in client.events()]
    again = json.dumps(model_calls(server)[seen]["messages"])
    assert "Approved plan:" in again and json.dumps(PLAN)[1:-1] in again
