"""ExitPlanMode and AskUserQuestion in the TUI (CONTRACT.md §11): the picker, keyboard only, at
120x40 and 60x20; an approval switches the mode within the turn, a dismissal reaches the model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.messages import ToolResultPart
from peri_cli.base.provider import ModelRequest
from peri_cli.context.plan_mode import PLAN_MODE_TEXT, approved_plan
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.session.transcript import MessageEntry
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.question_picker import QuestionPicker

from .harness import FIXED_NOW, make_runtime, screen_text, send, until

SIZES = [(120, 40), (60, 20)]
PLAN = "# The plan\n\n1. Write `out.txt` with **x**.\n2. Say [bold red]done[/]."
DB = {
    "question": "Which database?",
    "header": "DB",
    "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres"}],
}
CACHE = {
    "question": "Which caches [b]now[/b]?",
    "header": "Cache",
    "options": [{"label": "Redis"}, {"label": "Memory"}, {"label": "Disk"}],
    "multiSelect": True,
}


def recorded(sent: list[ModelRequest], reply: ScriptedReply) -> Callable[[ModelRequest], Any]:
    def answer(request: ModelRequest) -> ScriptedReply:
        sent.append(request)
        return reply

    return answer


def tool_results(app: PeriApp) -> list[ToolResultPart]:
    entries = app.runtime.session.entries  # type: ignore[union-attr]
    return [
        p
        for e in entries
        if isinstance(e, MessageEntry)
        for p in e.message.content
        if isinstance(p, ToolResultPart)
    ]


def plan_runtime(tmp_path: Path, sent: list[ModelRequest]) -> Any:
    write = ScriptedCall("Write", {"file_path": "out.txt", "content": "x"})
    replies = [
        recorded(sent, ScriptedReply(tool_calls=[ScriptedCall("ExitPlanMode", {"plan": PLAN})])),
        recorded(sent, ScriptedReply(tool_calls=[write])),
        recorded(sent, ScriptedReply(text="Done.")),
    ]
    return make_runtime(tmp_path, replies, mode="plan")


async def picker_open(pilot: Any, app: PeriApp) -> None:
    await until(pilot, lambda: isinstance(app.screen, QuestionPicker), what="the picker")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_approving_the_plan_switches_the_mode_and_the_turn_goes_on(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    sent: list[ModelRequest] = []
    app = PeriApp(plan_runtime(tmp_path, sent), clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        await send(pilot, "do it", wait=False)
        await picker_open(pilot, app)
        screen = screen_text(app)
        assert "The plan" in screen and "# The plan" not in screen  # drawn as Markdown
        assert "Approve and accept edits" in screen and "Keep planning" in screen
        assert "[bold red]done[/]" in screen  # the model's text, never markup
        await pilot.press("1")
        await until(pilot, (tmp_path / "ws" / "out.txt").exists, what="the write")
        await until(pilot, lambda: not app.busy, what="the turn's end")
        assert app.agent.policy.mode == "accept-edits"
        assert app.approvals.pending is None  # the Write asked nothing in accept-edits
        assert approved_plan(app.runtime.session.entries) == PLAN  # type: ignore[union-attr]
    assert PLAN_MODE_TEXT in sent[0].dynamic_system
    assert PLAN_MODE_TEXT not in sent[1].dynamic_system
    assert sent[0].frozen_system == sent[1].frozen_system


async def test_keep_planning_sends_the_note_and_stays_in_plan_mode(tmp_path: Path) -> None:
    sent: list[ModelRequest] = []
    app = PeriApp(plan_runtime(tmp_path, sent), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "do it", wait=False)
        await picker_open(pilot, app)
        await pilot.press("3")
        await pilot.press(*"add tests")
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy, what="the turn's end")
        assert app.agent.policy.mode == "plan"
        result = tool_results(app)[0]
        assert result.is_error and "keep planning" in result.text and "add tests" in result.text


async def test_questions_are_answered_from_the_keyboard(tmp_path: Path) -> None:
    ask = ScriptedCall("AskUserQuestion", {"questions": [DB, CACHE]})
    runtime = make_runtime(tmp_path, [ScriptedReply(tool_calls=[ask]), ScriptedReply(text="ok")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "set up", wait=False)
        await picker_open(pilot, app)
        assert "Which database?" in screen_text(app)
        await pilot.press("2")  # Postgres
        await pilot.pause()
        assert "Which caches [b]now[/b]?" in screen_text(app)
        await pilot.press("space", "down", "down", "space", "enter")  # Redis and Disk
        await until(pilot, lambda: not app.busy, what="the turn's end")
        (result,) = tool_results(app)
    assert not result.is_error
    assert '"Which database?"="Postgres"' in result.text
    assert '"Which caches [b]now[/b]?"="Redis, Disk"' in result.text


async def test_an_own_answer_and_an_escape_reach_the_model(tmp_path: Path) -> None:
    ask = ScriptedCall("AskUserQuestion", {"questions": [DB]})
    replies = [
        ScriptedReply(tool_calls=[ask]),
        ScriptedReply(tool_calls=[ScriptedCall("AskUserQuestion", {"questions": [DB]})]),
        ScriptedReply(text="ok"),
    ]
    app = PeriApp(make_runtime(tmp_path, replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "set up", wait=False)
        await picker_open(pilot, app)
        await pilot.press("3")  # type your own answer
        await pilot.press(*"MySQL", "enter")
        await until(pilot, lambda: len(tool_results(app)) == 1, what="the first answer")
        await picker_open(pilot, app)
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, what="the turn's end")
        first, second = tool_results(app)
    assert not first.is_error and '"Which database?"="MySQL"' in first.text
    assert second.is_error and "declined" in second.text
