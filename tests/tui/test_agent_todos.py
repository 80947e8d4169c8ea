"""A SubAgent's task list (issue 38): its TodoWrite list shows in its pane, live, replayed when the
pane opens and read back from its transcript after a resume; the main session's strip and
`/todos` keep showing the main list only."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.agent_pane import AgentPane

from .harness import FIXED_NOW, make_runtime, screen_text, send, until
from .test_agents import SLEEP, Router, background, child_states, make_app, spawn

MAIN = [
    {"content": "Delegate the scan", "status": "in_progress", "activeForm": "Delegating"},
    {"content": "Read the report", "status": "pending", "activeForm": "Reading the report"},
]
CHILD = [
    {"content": "List the modules", "status": "completed", "activeForm": "Listing modules"},
    {"content": "Scan each module", "status": "in_progress", "activeForm": "Scanning modules"},
    {"content": "Write the findings", "status": "pending", "activeForm": "Writing findings"},
    *(
        {"content": f"Check module {n}", "status": "pending", "activeForm": "Checking"}
        for n in (1, 2, 3)
    ),
]


def todo_call(todos: list[dict[str, str]]) -> ScriptedReply:
    return ScriptedReply(tool_calls=[ScriptedCall("TodoWrite", {"todos": todos})])


def shown_whole(app: PeriApp) -> list[str]:
    return [str(s.render()) for s in app.query(Static) if "Tasks: " in str(s.render())]


async def test_a_childs_list_shows_in_its_pane_not_in_the_main_strip(tmp_path: Path) -> None:
    router = Router(
        {
            "orchestrate": [
                todo_call(MAIN),
                ScriptedReply(tool_calls=[background("toolu_s", "job S: scan", "scanner")]),
                ScriptedReply(text="The scan runs."),
            ],
            "job S": [todo_call(CHILD), ScriptedReply(text="Scanning now.", tool_calls=[SLEEP])],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate the scan", wait=False)
        board = app.agent_board
        await until(pilot, lambda: child_states(app) == {"scanner": "running"}, what="the child")
        await until(pilot, lambda: not app.busy, what="the parent's turn to end")
        await until(
            pilot,
            lambda: (
                board is not None
                and any(c.last_tool.startswith("Bash") for c in board.children.values())
            ),
            what="the child's list and command",
        )
        main = str(app.todo_strip.render())
        assert main.startswith("Delegating") and "Scan each module" not in main
        # its pane shows its own list, above its status line
        await pilot.press("ctrl+down", "enter")
        await until(pilot, lambda: isinstance(app.screen, AgentPane), what="the pane")
        await until(pilot, lambda: "Scanning now." in screen_text(app), what="the child's text")
        await until(
            pilot, lambda: "Scanning modules  1/6 done" in screen_text(app), what="its list"
        )
        screen = screen_text(app)
        assert "☒ List the modules" in screen and "▸ Scan each module" in screen
        assert "1 more" in screen and "/todos" not in screen  # /todos shows the main list
        assert "Delegate the scan" not in screen
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AgentPane), what="pane closed")
        await pilot.press("escape")
        assert str(app.todo_strip.render()) == main  # the main strip is the main list still
        await send(pilot, "/todos")
        (whole,) = shown_whole(app)
        assert "Delegate the scan" in whole and "Scan each module" not in whole
    app.runtime.close()


async def test_a_resumed_childs_pane_shows_the_list_its_transcript_holds(tmp_path: Path) -> None:
    router = Router(
        {
            "delegate": [
                ScriptedReply(tool_calls=[spawn("toolu_f", "job F: scan", "finder")]),
                ScriptedReply(text="The child reported."),
            ],
            "job F": [todo_call(CHILD), ScriptedReply(text="Found two modules.")],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "delegate the scan")
        assert child_states(app) == {"finder": "done"}
        assert not app.todo_strip.display  # the main session keeps no list
        session_id = app.agent.session.id
    app.runtime.close()

    runtime = make_runtime(tmp_path, new_session=False)
    runtime.start_existing(session_id, fork=False)
    resumed = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with resumed.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: resumed.agent_board is not None and resumed.agent_board.children)
        board = resumed.agent_board
        assert board is not None
        (finder,) = board.children.values()
        assert not finder.live
        await send(pilot, f"/agents open {finder.id[:8]}", wait=False)
        await until(pilot, lambda: isinstance(resumed.screen, AgentPane), what="the pane")
        await until(pilot, lambda: "Found two modules." in screen_text(resumed), what="its text")
        await until(pilot, lambda: "▸ Scan each module" in screen_text(resumed), what="its list")
        await pilot.press("escape")
        assert not resumed.todo_strip.display
    runtime.close()
