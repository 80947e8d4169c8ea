"""Issue 38 in the TUI (Pilot): in plan mode the model keeps a task list, has its plan approved
from the keyboard, runs a check that fails and then passes around an Edit; the user types
`/compact`. The first request after it carries the working state (the list, the commands, the
edited file, the approved plan), and so does the first request of a new app resuming it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.messages import TextPart
from peri_cli.base.provider import ModelRequest
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.question_picker import QuestionPicker

from .harness import FIXED_NOW, make_runtime, send, until

TODOS = [
    {"content": "Read the config", "status": "completed", "activeForm": "Reading the config"},
    {"content": "Rename the setting", "status": "in_progress", "activeForm": "Renaming it"},
    {"content": "Write the notes", "status": "pending", "activeForm": "Writing the notes"},
]
PLAN = "# Rename plan\n\n1. Change `name = old` to `name = new` in config.ini.\n2. Run the check."
CHECK = "grep -q 'name = new' config.ini"
EDIT = {"file_path": "config.ini", "old_string": "name = old", "new_string": "name = new"}
SUMMARY = "<summary>Renamed the setting in config.ini; the check passes.</summary>"
# The picker's keys: 1 approves and accepts edits, 2 approves and asks for each edit.
CHOICES = {"accept-edits": "1", "default": "2"}


def recorded(sent: list[ModelRequest], reply: ScriptedReply) -> Callable[[ModelRequest], Any]:
    def answer(request: ModelRequest) -> ScriptedReply:
        sent.append(request)
        return reply

    return answer


def work_replies() -> list[ScriptedReply]:
    calls = [
        ScriptedCall("TodoWrite", {"todos": TODOS}),
        ScriptedCall("ExitPlanMode", {"plan": PLAN}),
        ScriptedCall("Bash", {"command": CHECK}),
        ScriptedCall("Edit", EDIT),
        ScriptedCall("Bash", {"command": CHECK}),
    ]
    return [*(ScriptedReply(tool_calls=[c]) for c in calls), ScriptedReply(text="Renamed.")]


def working_state(request: ModelRequest) -> str:
    """The working state's text, checked to be the first text after the summary."""
    texts = [p.text for m in request.messages for p in m.content if isinstance(p, TextPart)]
    (state,) = [t for t in texts if "<working_state>" in t]
    summary_at = next(i for i, t in enumerate(texts) if "Renamed the setting in" in t)
    assert texts[summary_at + 1] == state
    return state


def assert_kept(state: str, mode: str) -> None:
    assert "[~] Rename the setting" in state and "Now: Renaming it" in state
    assert "[x] Read the config" in state and "[ ] Write the notes" in state
    assert f"`{CHECK}` → exit 1" in state and f"`{CHECK}` → exit 0" in state
    assert "Still failing" not in state  # the later run of the same command passed
    assert "- config.ini: edited, 2 lines" in state
    assert "Approved plan:" in state and PLAN.splitlines()[-1] in state
    assert f"Permission mode: {mode}" in state


async def work_through_approvals(pilot: Any, app: PeriApp, choice: str) -> None:
    """Approve the plan in the picker with `choice`, then every tool the mode still asks about
    (Bash, and the Edit when each edit is asked for) with y, until the turn ends."""
    await until(pilot, lambda: isinstance(app.screen, QuestionPicker), what="the plan picker")
    await pilot.pause()
    await pilot.press(choice)
    while app.busy:
        if app.approvals.pending is not None:
            await pilot.press("y")
        await pilot.pause(0.02)


@pytest.mark.parametrize("mode", list(CHOICES))
async def test_the_working_state_survives_compact_and_resume_in_the_tui(
    tmp_path: Path, mode: str
) -> None:
    sent: list[ModelRequest] = []
    replies: list[Any] = [*work_replies(), ScriptedReply(text=SUMMARY)]
    replies.append(recorded(sent, ScriptedReply(text="Carrying on.")))
    runtime = make_runtime(tmp_path, replies, mode="plan")
    (tmp_path / "ws" / "config.ini").write_text("[main]\nname = old\n")
    session_id = runtime.session.id  # type: ignore[union-attr]
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "rename the setting", wait=False)
        await work_through_approvals(pilot, app, CHOICES[mode])
        assert (tmp_path / "ws" / "config.ini").read_text() == "[main]\nname = new\n"
        assert app.agent.policy.mode == mode
        await send(pilot, "/compact")
        await send(pilot, "what next?")
    runtime.close()
    (first,) = sent
    state = working_state(first)
    assert_kept(state, mode)

    (tmp_path / "ws" / "config.ini").unlink()  # the entry is used as written: nothing re-read
    again: list[ModelRequest] = []
    resumed = make_runtime(
        tmp_path, [recorded(again, ScriptedReply(text="Still here."))], new_session=False
    )
    resumed.start_existing(session_id, fork=False)
    app = PeriApp(resumed, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "and now?")
    resumed.close()
    assert working_state(again[0]) == state
