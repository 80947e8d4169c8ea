"""Pilot tests of sessions: the picker (resume, fork, filter), startup with `-r`, long sessions."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import DataTable

from peri_cli.base.messages import ToolUsePart
from peri_cli.providers.scripted import ScriptedReply
from peri_cli.session.store import SessionInfo
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.session_picker import SessionPicker
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.load_earlier import LoadEarlier
from peri_cli.tui.widgets.tool_call import ToolCallView
from peri_cli.tui.widgets.user_message import UserMessage

from .harness import (
    FIXED_NOW,
    assistant,
    make_runtime,
    results,
    send,
    until,
    user,
    write_session,
)
from .test_turns import notices

OLD = "01980000-0000-7000-8000-000000000001"
NEW = "01980000-0000-7000-8000-000000000002"


def two_sessions(runtime_store: object) -> None:
    write_session(
        runtime_store,  # type: ignore[arg-type]
        OLD,
        [user("fix the parser"), assistant("Done, the parser is fixed.")],
        age=3 * 86400,
    )
    write_session(
        runtime_store,  # type: ignore[arg-type]
        NEW,
        [user("add a changelog"), assistant("Added CHANGELOG.md.")],
        age=600,
    )


def user_texts(app: PeriApp) -> list[str]:
    return [w.text for w in app.query(UserMessage)]


async def test_r_without_id_opens_the_picker_and_resumes(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="continuing")], new_session=False)
    two_sessions(runtime.store)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        assert [s.id for s in picker.shown] == [NEW, OLD]  # newest first
        await pilot.press("down", "enter")
        await until(pilot, lambda: user_texts(app) == ["fix the parser"], what="the old session")
        assert runtime.session is not None and runtime.session.id == OLD
        await send(pilot, "and now?", wait=False)
        await until(pilot, lambda: not app.busy and len(app.query(AssistantMessage)) == 2)
        assert runtime.session.info.message_count == 4
    runtime.close()


async def test_the_picker_marks_a_session_that_never_got_an_answer(tmp_path: Path) -> None:
    """Issue 37 item 11: `-c` passes over such a session; the picker still offers it, marked."""
    runtime = make_runtime(tmp_path, new_session=False)
    two_sessions(runtime.store)
    failed = "01980000-0000-7000-8000-000000000003"
    write_session(runtime.store, failed, [user("a run with a bad key")], age=60)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        assert [s.id for s in picker.shown] == [failed, NEW, OLD]
        table = picker.query_one(DataTable)
        titles = [str(table.get_row_at(i)[0]) for i in range(3)]
        assert titles == ["a run with a bad key  (no answer)", "add a changelog", "fix the parser"]
    runtime.close()


async def test_resume_command_filters_and_forks(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    two_sessions(runtime.store)
    current = runtime.session.id if runtime.session else ""
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/resume", wait=False)
        await until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        # the current session has no message yet, so it is not offered
        assert {s.id for s in picker.shown} == {OLD, NEW}
        await pilot.press(*"parser")
        assert [s.id for s in picker.shown] == [OLD]
        await pilot.press("ctrl+f")
        await until(pilot, lambda: user_texts(app) == ["fix the parser"], what="the fork")
        assert runtime.session is not None
        fork = runtime.session
        assert fork.id not in (OLD, NEW, current)
        assert fork.header.parent is not None and fork.header.parent.session_id == OLD
        assert "Forked" in notices(app)
    infos = {i.id: i for i in runtime.store.list()}
    assert infos[OLD].message_count == 2  # the original is untouched
    runtime.close()


async def test_fork_command_continues_in_a_copy(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="one")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        assert runtime.session is not None
        original = runtime.session.id
        await send(pilot, "hello")
        await send(pilot, "/fork", wait=False)
        await until(pilot, lambda: runtime.session is not None and runtime.session.id != original)
        assert runtime.session.header.parent.session_id == original  # type: ignore[union-attr]
        assert user_texts(app) == ["hello"]
    runtime.close()


async def test_long_session_mounts_recent_items_and_loads_more(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, new_session=False)
    messages = []
    for i in range(150):
        messages.append(user(f"question {i}"))
        messages.append(assistant(f"answer {i}"))
    write_session(runtime.store, OLD, messages)
    runtime.start_existing(OLD, fork=False)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW, page=40)
    started = time.monotonic()
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.query(UserMessage), what="the history")
        assert time.monotonic() - started < 20
        # the newest few before the first paint, the rest of the page right after it
        await until(pilot, lambda: len(app.query(UserMessage)) >= 20, what="the newest page")
        assert len(app.query(UserMessage)) == 20  # 40 newest items: 20 questions + 20 answers
        assert user_texts(app)[-1] == "question 149"
        more = app.query_one(LoadEarlier)
        assert more.display and app.conversation.hidden_count == 260
        app.conversation.scroll_home(animate=False)  # reaching the top loads a page
        await until(pilot, lambda: len(app.query(UserMessage)) == 40, what="an earlier page")
        assert user_texts(app)[0] == "question 110"
        more.focus()
        await pilot.press("enter")  # and so does the control itself
        await until(pilot, lambda: len(app.query(UserMessage)) == 60, what="another page")
    runtime.close()


async def test_resumed_tools_guide_and_cost(tmp_path: Path) -> None:
    from peri_cli.base.messages import Usage

    runtime = make_runtime(tmp_path, new_session=False)
    use = ToolUsePart(
        id="t1",
        name="Edit",
        input={"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
    )
    write_session(
        runtime.store,
        OLD,
        [
            user("bump x"),
            assistant("Editing.", use),
            results(("t1", "Edited a.py")),
            assistant("Ok"),
        ],
        guide_files=["AGENTS.md"],
        usage=Usage(input_tokens=1000, output_tokens=100, cache_read_input_tokens=3000),
    )
    runtime.start_existing(OLD, fork=False)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.query(ToolCallView))
        view = app.query_one(ToolCallView)
        assert view.state == "done" and view.output == "Edited a.py" and view._diff is not None
        assert "Project guide: AGENTS.md" in notices(app)
        status = app.status.status
        assert status.cost_usd and status.cost_usd > 0 and status.cache_share == 0.75
    runtime.close()


def test_picker_filters_thousands_fast() -> None:
    sessions = [
        SessionInfo(
            f"{i:08d}-x", f"task number {i}", "2026-01-01T00:00:00", "2026-01-01T00:00:00", i
        )
        for i in range(3000)
    ]
    import asyncio

    from textual.app import App

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(SessionPicker(sessions, now=FIXED_NOW, current=None))

    async def run() -> float:
        app = Host()
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SessionPicker))
            picker = app.screen
            assert isinstance(picker, SessionPicker)
            assert picker.matched == 3000 and len(picker.shown) == 400  # newest first, capped
            assert picker.shown[0].id == "00000000-x"
            started = time.monotonic()
            await pilot.press("2", "9", "9", "9")
            assert [s.id for s in picker.shown] == ["00002999-x"]
            return time.monotonic() - started

    assert asyncio.run(run()) < 10


async def test_r_with_no_sessions_starts_a_new_one(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, new_session=False)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: runtime.session is not None, what="a new session")
        assert "No sessions to resume" in notices(app)
        assert not isinstance(app.screen, SessionPicker)
    runtime.close()


async def test_long_live_session_keeps_only_recent_widgets(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW, page=2)
    async with app.run_test(size=(100, 30)) as pilot:
        for i in range(5):
            await send(pilot, f"q{i}")
        assert len(app.conversation.children) <= 4 * 2 + 1
        assert user_texts(app)[-1] == "q4" and app.conversation.hidden_count > 0
    runtime.close()
