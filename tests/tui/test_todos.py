"""The task list in the TUI (issue 38): a compact checklist above the prompt with the task in
progress as its live line, folded when long; `/todos` shows it whole; it comes back on resume and
goes with `/clear`."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from peri_cli.base.messages import ToolUsePart
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.tui.app import PeriApp

from .harness import FIXED_NOW, assistant, make_runtime, results, send, until, user, write_session

OLD = "0198a1b2-0000-7000-8000-0000000000ad"


def todo(n: int, status: str) -> dict[str, str]:
    return {"content": f"Task {n} \x1b[31m", "status": status, "activeForm": f"Doing task {n}"}


LONG = [todo(n, "completed") for n in range(6)] + [todo(6, "in_progress")]
LONG += [todo(n, "pending") for n in range(7, 12)]


async def test_the_checklist_above_the_prompt_and_todos_whole(tmp_path: Path) -> None:
    replies = [
        ScriptedReply(tool_calls=[ScriptedCall("TodoWrite", {"todos": LONG})]),
        ScriptedReply(text="planned"),
    ]
    runtime = make_runtime(tmp_path, replies)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        strip = app.todo_strip
        assert not strip.display  # no list yet
        await send(pilot, "plan the work")
        await until(pilot, lambda: strip.display, what="the task list")
        shown = str(strip.render())
        lines = shown.splitlines()
        assert lines[0].startswith("Doing task 6") and "6/12 done" in lines[0]
        assert "▸ Task 6" in shown and "☒ Task 5" in shown and "☐ Task 9" in shown
        assert "Task 0" not in shown and "Task 11" not in shown  # folded around the open task
        assert "5 done above, 2 more · /todos" in shown
        assert "\x1b" not in shown and "␛[31m" in shown  # the model's text made visible
        await send(pilot, "/todos")
        await until(
            pilot,
            lambda: any("Tasks: 6 of 12 done" in str(s.render()) for s in app.query(Static)),
            what="the whole list",
        )
        whole = next(str(s.render()) for s in app.query(Static) if "Tasks: 6 of" in str(s.render()))
        assert all(f"Task {n} " in whole for n in range(12))
        await send(pilot, "/clear")
        await until(pilot, lambda: not strip.display, what="the list gone with the history")
    runtime.close()


async def test_a_resumed_session_shows_its_list_and_a_finished_one_hides(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, new_session=False)
    use = ToolUsePart(id="t1", name="TodoWrite", input={"todos": [todo(1, "in_progress")]})
    write_session(
        runtime.store, OLD, [user("work"), assistant("Planning.", use), results(("t1", "ok"))]
    )
    runtime.start_existing(OLD, fork=False)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: app.todo_strip.display, what="the resumed task list")
        assert str(app.todo_strip.render()).startswith("Doing task 1")
        app.todo_strip.show(
            [t.model_copy(update={"status": "completed"}) for t in app.todo_strip.todos]
        )
        assert not app.todo_strip.display  # every task done: the strip goes
    runtime.close()
