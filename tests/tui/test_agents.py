"""Issue 12, "Panes in the TUI": SubAgent cards paired to their Agent calls, the agent strip, the
panes, `/agents`, child approvals, background reports waking the parent, stopping. The real loop
and tools; the scripted provider answers each agent by its first message (children run
concurrently, so a single ordered script cannot say who gets what)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from peri_cli.base.messages import ToolResultPart, Usage
from peri_cli.base.provider import ModelRequest
from peri_cli.context.tokens import TokenCounter
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.session.children import list_children
from peri_cli.session.transcript import MessageEntry
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.agent_pane import AgentPane
from peri_cli.tui.widgets.agent_card import AgentCard
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.notice import NoticeLine
from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

from .harness import FIXED_NOW, make_runtime, screen_text, send, until
from .scenes import SCENE_TOOLS

SLEEP = ScriptedCall("Bash", {"command": "sleep 30"})
WAIT_FOR_GO = "until [ -e go ]; do sleep 0.05; done"


class Router:
    """Replies by who asks: the first script whose key is in the request's first user message
    gives its next reply (then "<key> done")."""

    def __init__(self, scripts: dict[str, list[ScriptedReply]]) -> None:
        self.scripts = scripts
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ScriptedReply:
        self.requests.append(request)
        first = request.messages[0].text if request.messages else ""
        for key, replies in self.scripts.items():
            if key in first:
                return replies.pop(0) if replies else ScriptedReply(text=f"{key} done.")
        return ScriptedReply(text="ok")

    def replies(self) -> list[Router]:
        return [self] * 200

    def asked(self, key: str) -> list[ModelRequest]:
        return [r for r in self.requests if r.messages and key in r.messages[0].text]


def background(call_id: str, prompt: str, description: str) -> ScriptedCall:
    return spawn(call_id, prompt, description, run_in_background=True)


def spawn(call_id: str, prompt: str, description: str, **extra: object) -> ScriptedCall:
    return ScriptedCall(
        "Agent", {"prompt": prompt, "description": description, **extra}, id=call_id
    )


def card(app: PeriApp, call_id: str) -> AgentCard:
    return next(c for c in app.query(AgentCard) if c.call_id == call_id)


def title(app: PeriApp, call_id: str) -> str:
    return card(app, call_id).title.plain


def notices(app: PeriApp) -> str:
    return "\n".join(n.text for n in app.query(NoticeLine))


def child_states(app: PeriApp) -> dict[str, str]:
    board = app.agent_board
    assert board is not None
    return {c.description: c.state for c in board.children.values()}


def make_app(tmp_path: Path, router: Router, mode: str = "bypass") -> PeriApp:
    runtime = make_runtime(tmp_path, router.replies(), mode=mode)  # type: ignore[arg-type]
    return PeriApp(runtime, clock=lambda: FIXED_NOW)


def running(app: PeriApp, n: int) -> Callable[[], bool]:
    return lambda: len([c for c in child_states(app).values() if c == "running"]) == n


async def test_cards_pair_with_their_calls_by_id_when_spawns_interleave(tmp_path: Path) -> None:
    """Two background children; the second spawned runs first and finishes first: each card
    still shows its own child (type, description, state, latest tool with its argument)."""
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    (tmp_path / "ws" / "b.txt").write_text("bee\n")
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(
                    tool_calls=[
                        background("toolu_a", "job A: wait", "slow job"),
                        background("toolu_b", "job B: read", "quick job"),
                    ]
                ),
                ScriptedReply(text="Both started."),
            ],
            "job A": [ScriptedReply(tool_calls=[SLEEP])],
            "job B": [
                ScriptedReply(tool_calls=[ScriptedCall("Read", {"file_path": "b.txt"})]),
                ScriptedReply(text="B read bee."),
            ],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate two jobs", wait=False)
        await until(pilot, lambda: child_states(app).get("quick job") == "done", what="B done")
        await until(pilot, lambda: "done" in title(app, "toolu_b"), what="B's card")
        a, b = title(app, "toolu_a"), title(app, "toolu_b")
        assert "general" in a and "slow job" in a and "running" in a and "Bash: sleep 30" in a
        assert "quick job" in b and "done" in b and "Read: b.txt" in b and "tokens" in b
        assert "slow job" not in b and "quick job" not in a
        # expanded, B's card shows its tool calls as a tree
        card(app, "toolu_b").collapsed = False
        await pilot.pause()
        assert "└─ ● Read(b.txt)" in screen_text(app)
    app.runtime.close()


async def test_strip_focus_select_open_a_pane_and_stop_a_child(tmp_path: Path) -> None:
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(
                    tool_calls=[
                        background("toolu_a", "job A: wait", "first job"),
                        background("toolu_b", "job B: wait", "second job"),
                    ]
                ),
                ScriptedReply(text="Both started."),
            ],
            "job A": [ScriptedReply(text="A is looking around.", tool_calls=[SLEEP])],
            "job B": [ScriptedReply(text="B is looking around.", tool_calls=[SLEEP])],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate two jobs", wait=False)
        await until(pilot, running(app, 2), what="two running children")
        await until(pilot, lambda: not app.busy, what="the parent's turn to end")
        strip = app.agent_strip
        await until(pilot, lambda: len(strip.rows) == 2, what="the strip's rows")
        screen = screen_text(app)
        assert "SubAgents: 2 running" in screen and "Bash: sleep 30" in screen
        # printable keys typed in the prompt stay there: `x` stops nothing
        await pilot.press("x")
        assert app.prompt_area.text == "x" and running(app, 2)()
        await pilot.press("backspace")
        # ↓ on the empty prompt focuses the strip; ↓ selects the second child
        await pilot.press("down")
        assert app.focused is strip
        await pilot.press("down")
        assert strip.current is not None and strip.current.description == "second job"
        # Enter opens its pane: its stream and tool call, as in the conversation
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, AgentPane), what="the pane")
        pane = app.screen
        assert isinstance(pane, AgentPane)
        await until(pilot, lambda: "B is looking around." in screen_text(app), what="B's text")
        assert "Bash(sleep 30)" in screen_text(app) and "second job" in screen_text(app)
        assert "job B: wait" in screen_text(app)  # what it was asked comes first
        # closing the pane does not stop the child
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AgentPane), what="pane closed")
        assert running(app, 2)() and app.focused is strip
        # `x` in the strip stops the selected child only
        await pilot.press("x")
        await until(pilot, lambda: child_states(app)["second job"] == "interrupted")
        assert child_states(app)["first job"] == "running"
        await until(pilot, lambda: len(strip.rows) == 1, what="the strip to drop it")
        await pilot.press("escape")
        assert app.focused is app.prompt_area.input
        # Ctrl+↓ focuses the strip from anywhere
        await pilot.press("ctrl+down")
        assert app.focused is strip
    app.runtime.close()


async def test_a_childs_question_is_asked_in_the_dock_with_its_name(tmp_path: Path) -> None:
    write = ScriptedCall("Write", {"file_path": "out.txt", "content": "from the child\n"})
    router = Router(
        {
            "delegate": [
                ScriptedReply(tool_calls=[spawn("toolu_w", "job W: write out.txt", "writer")]),
                ScriptedReply(text="The child wrote it."),
            ],
            "job W": [ScriptedReply(tool_calls=[write]), ScriptedReply(text="Wrote out.txt.")],
        }
    )
    app = make_app(tmp_path, router, mode="default")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "delegate the write", wait=False)
        await until(pilot, lambda: app.approvals.pending is not None, what="the question")
        prompt = app.approvals.pending
        assert isinstance(prompt, PermissionPrompt) and app.focused is prompt
        assert "asked by general: writer" in screen_text(app)
        await pilot.press("y")
        await until(pilot, lambda: not app.busy, what="the turn to end")
        assert (tmp_path / "ws" / "out.txt").read_text() == "from the child\n"
        assert child_states(app) == {"writer": "done"}
        assert "Wrote out.txt." in title(app, "toolu_w") or "done" in title(app, "toolu_w")
    app.runtime.close()


async def test_a_background_report_wakes_the_idle_parent(tmp_path: Path) -> None:
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(tool_calls=[background("toolu_a", "job A: count", "counter")]),
                ScriptedReply(text="Started; I will wait."),
                ScriptedReply(text="The counter reported 42."),
            ],
            "job A": [
                ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 0.3"})]),
                ScriptedReply(text="The count is 42."),
            ],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate a count", wait=False)
        await until(
            pilot,
            lambda: any("reported 42" in m.text for m in app.query(AssistantMessage)),
            what="the parent woken by the report",
        )
        parent = router.asked("orchestrate")
        assert len(parent) == 3
        woken = parent[-1].messages[-1].text
        assert "finished" in woken and "The count is 42." in woken
        assert "Its report goes to the agent." in notices(app)
    app.runtime.close()


async def test_while_the_user_types_the_report_waits_for_their_message(tmp_path: Path) -> None:
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(tool_calls=[background("toolu_a", "job A: count", "counter")]),
                ScriptedReply(text="Started."),
                ScriptedReply(text="Got both."),
            ],
            "job A": [
                # (the child finishes only once the parent's turn is over: on a loaded machine
                # a report that came mid-turn went into that turn and never waited)
                ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": WAIT_FOR_GO})]),
                ScriptedReply(text="The count is 42."),
            ],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate a count", wait=False)
        # (the Enter handled first: on a loaded machine it could come after the insert, sending
        # both texts and leaving the prompt empty, and the report then woke the parent)
        await until(pilot, lambda: app.prompt_area.text == "", what="the prompt sent")
        app.prompt_area.input.insert("and more")  # the user types on while the parent works
        await until(pilot, lambda: len(router.asked("orchestrate")) == 2, what="the parent")
        await until(pilot, lambda: not app.busy, what="the parent's turn")
        (tmp_path / "ws" / "go").write_text("")
        await until(pilot, lambda: child_states(app).get("counter") == "done", what="the child")
        await until(pilot, lambda: not app.busy and bool(app.agent.inbox), what="the turn")
        await pilot.pause(0.3)
        assert app.agent.inbox and not app.busy  # not woken: the user is typing
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and not app.agent.inbox, what="the message")
        sent = router.requests[-1].messages[-1].text  # (consecutive user messages are merged)
        assert sent.index("The count is 42.") < sent.index("and more")
    app.runtime.close()


async def test_stopping_a_foreground_child_from_the_strip_lets_the_parent_go_on(
    tmp_path: Path,
) -> None:
    router = Router(
        {
            "delegate": [
                ScriptedReply(tool_calls=[spawn("toolu_f", "job F: wait", "waiter")]),
                ScriptedReply(text="The child was stopped; I will go on myself."),
            ],
            "job F": [ScriptedReply(tool_calls=[SLEEP])],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "delegate the wait", wait=False)
        await until(pilot, running(app, 1), what="the child")
        await until(pilot, lambda: app.agent_strip.display, what="the strip")
        await pilot.press("ctrl+down", "x")
        await until(pilot, lambda: not app.busy, what="the parent's turn to end")
        assert child_states(app) == {"waiter": "interrupted"}
        result = router.asked("delegate")[-1].messages[-1].content[0]
        assert isinstance(result, ToolResultPart) and result.is_error
        assert "was interrupted before it finished" in result.text
        assert any("go on myself" in m.text for m in app.query(AssistantMessage))
        assert "interrupted" in title(app, "toolu_f")
    app.runtime.close()


async def test_ctrl_c_stops_the_turn_and_its_foreground_child_not_background_ones(
    tmp_path: Path,
) -> None:
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(tool_calls=[background("toolu_b", "job B: wait", "background")]),
                ScriptedReply(tool_calls=[spawn("toolu_f", "job F: wait", "foreground")]),
            ],
            "job B": [ScriptedReply(tool_calls=[SLEEP])],
            "job F": [ScriptedReply(tool_calls=[SLEEP])],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate", wait=False)
        await until(pilot, running(app, 2), what="both children")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.busy, what="the turn to stop")
        await until(pilot, lambda: child_states(app)["foreground"] == "interrupted")
        assert child_states(app)["background"] == "running"
        await until(pilot, lambda: [r.description for r in app.agent_strip.rows] == ["background"])
        assert "Interrupted" in notices(app)
    app.runtime.close()


async def test_exit_stops_children_and_a_resumed_session_shows_their_cards(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    (tmp_path / "ws" / "a.txt").write_text("alpha\n")
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(
                    tool_calls=[
                        spawn("toolu_done", "job D: read a.txt", "reader"),
                        background("toolu_bg", "job B: wait", "sleeper"),
                    ]
                ),
                ScriptedReply(text="One read, one waiting."),
            ],
            "job D": [
                ScriptedReply(tool_calls=[ScriptedCall("Read", {"file_path": "a.txt"})]),
                ScriptedReply(text="a.txt says alpha."),
            ],
            "job B": [ScriptedReply(tool_calls=[SLEEP])],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate", wait=False)
        await until(pilot, lambda: child_states(app) == {"reader": "done", "sleeper": "running"})
        await until(pilot, lambda: not app.busy)
        session_id = app.agent.session.id
        session_dir = app.agent.session.dir
        await pilot.press("ctrl+c", "ctrl+c")  # quit while the background child runs
    app.runtime.close()
    states = {r.ref.description: r.state for r in list_children(session_dir)}
    assert states == {"reader": "done", "sleeper": "interrupted"}  # stopped and marked so

    runtime = make_runtime(tmp_path, new_session=False)
    runtime.start_existing(session_id, fork=False)
    resumed = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(resumed.query(AgentCard)) == 2, what="the cards")
        await until(pilot, lambda: "interrupted" in title(resumed, "toolu_bg"), what="states")
        done = title(resumed, "toolu_done")
        assert "reader" in done and "done" in done and "Read: a.txt" in done
        assert "sleeper" in title(resumed, "toolu_bg")
        assert not resumed.agent_strip.display  # nothing runs
        # its pane opens from the transcript
        await send(pilot, "/agents", wait=True)
        board = resumed.agent_board
        assert board is not None
        reader = next(c for c in board.children.values() if c.description == "reader")
        await send(pilot, f"/agents open {reader.id[:8]}", wait=False)
        await until(pilot, lambda: isinstance(resumed.screen, AgentPane), what="the pane")
        await until(pilot, lambda: "a.txt says alpha." in screen_text(resumed), what="its text")
        await pilot.press("escape")
    runtime.close()


async def test_agents_lists_types_problems_and_children_and_stops_one(tmp_path: Path) -> None:
    agents = tmp_path / "ws" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\ndescription: Reviews diffs\ntools: Read, Grep\n---\nReview carefully.\n"
    )
    (agents / "broken.md").write_text("---\ntools: [Read\n---\nno description\n")
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(tool_calls=[background("toolu_a", "job A: wait", "long wait")]),
                ScriptedReply(text="Started."),
            ],
            "job A": [ScriptedReply(tool_calls=[SLEEP])],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(140, 50)) as pilot:
        await send(pilot, "orchestrate", wait=False)
        await until(pilot, running(app, 1), what="the child")
        await until(pilot, lambda: not app.busy)
        await send(pilot, "/agents")
        screen = screen_text(app)
        for name in ("general", "explore", "reviewer", "Reviews diffs", "Read, Grep"):
            assert name in screen, name
        assert "broken.md" in screen and "skipped" in screen
        assert "long wait" in screen and "running" in screen
        board = app.agent_board
        assert board is not None
        (child,) = board.children.values()
        await send(pilot, "/agents stop zzz")
        assert "No single SubAgent id starts with 'zzz'" in notices(app)
        await send(pilot, f"/agents stop {child.id[:8]}")
        await until(pilot, lambda: child_states(app) == {"long wait": "interrupted"})
        assert f"Stopping SubAgent {child.id[:8]}" in notices(app)
    app.runtime.close()
    entries = [e for e in app.agent.session.entries if isinstance(e, MessageEntry)]
    assert entries  # the parent's record is intact


async def test_a_childs_long_question_stays_on_screen_above_the_strip_at_60x20(
    tmp_path: Path,
) -> None:
    slow = " ".join(f"w{i}" for i in range(100))
    command = "\n".join(f"echo step {i}" for i in range(1, 13))
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(
                    tool_calls=[
                        background("toolu_a", "job A: think", "thinker one"),
                        background("toolu_b", "job B: think", "thinker two"),
                        background("toolu_c", "job C: build", "builder"),
                    ]
                ),
                ScriptedReply(text="Started."),
            ],
            # (A and B run for 100 s, past any slowness of a loaded machine; quitting stops them)
            "job A": [ScriptedReply(text=slow, delay=1.0)],
            "job B": [ScriptedReply(text=slow, delay=1.0)],
            "job C": [ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": command})])],
        }
    )
    app = make_app(tmp_path, router, mode="default")
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "orchestrate", wait=False)
        await until(pilot, lambda: app.approvals.pending is not None, what="the question")
        await until(pilot, lambda: len(app.agent_strip.rows) == 3, what="the strip")
        # every row of the strip shows (drawn within a frame or two of the rows' arrival)
        await until(pilot, lambda: screen_text(app).count("· ◐ running") == 3, what="3 rows")
        screen = screen_text(app)
        assert "Allow Bash? 1–5" in screen and "SubAgents: 3 running" in screen
        assert "asked by" in screen and "Esc denies" in screen, screen
        await pilot.press("n")
        await until(pilot, lambda: child_states(app)["builder"] != "running", what="denied")
    app.runtime.close()


def two_running(tmp_path: Path) -> PeriApp:
    """Two background children at work (each in a long command), the parent idle."""
    usage = Usage(input_tokens=900, output_tokens=60, cache_read_input_tokens=11_000)
    child = Usage(input_tokens=2_400, output_tokens=180)
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(
                    text="I will hand both pieces to SubAgents.",
                    tool_calls=[
                        background("toolu_a", "job A: find the parser", "find the parser"),
                        background("toolu_b", "job B: run the tests", "run the tests"),
                    ],
                    usage=usage,
                ),
                ScriptedReply(text="Both are running; I will read their reports.", usage=usage),
            ],
            "job A": [
                ScriptedReply(
                    text="Looking for the parser in **src/**.",
                    tool_calls=[ScriptedCall("Bash", {"command": "sleep 30; grep -rn parse"})],
                    usage=child,
                )
            ],
            "job B": [
                ScriptedReply(
                    text="Running the suite first.",
                    tool_calls=[ScriptedCall("Bash", {"command": "sleep 30; pytest -q"})],
                    usage=child,
                )
            ],
        }
    )
    runtime = make_runtime(tmp_path, router.replies(), mode="bypass", builtin_names=SCENE_TOOLS)
    return PeriApp(runtime, clock=lambda: FIXED_NOW, counter=TokenCounter())


async def _both_running(pilot: Any) -> None:
    app = pilot.app
    await send(pilot, "orchestrate the fix", wait=False)
    await until(pilot, lambda: not app.busy and len(app.agent_strip.rows) == 2, what="children")
    board = app.agent_board
    await until(
        pilot,
        lambda: all(c.last_tool.startswith("Bash") for c in board.children.values()),
        what="their commands",
    )
    await until(pilot, lambda: all("Bash" in title(app, i) for i in ("toolu_a", "toolu_b")))
    card(app, "toolu_a").collapsed = False
    await pilot.pause(0.2)


def test_snapshot_cards_and_strip_with_two_children_running(
    snap_compare: Any, tmp_path: Path
) -> None:
    app = two_running(tmp_path)
    try:
        assert snap_compare(app, terminal_size=(110, 36), run_before=_both_running)
    finally:
        app.runtime.close()


def test_snapshot_a_pane_while_two_children_run(snap_compare: Any, tmp_path: Path) -> None:
    app = two_running(tmp_path)

    async def pane(pilot: Any) -> None:
        await _both_running(pilot)
        await pilot.press("ctrl+down", "down", "enter")
        await until(pilot, lambda: isinstance(app.screen, AgentPane), what="the pane")
        await until(pilot, lambda: "Running the suite first." in screen_text(app))
        await until(pilot, lambda: "Bash(sleep 30; pytest -q)" in screen_text(app))
        await pilot.pause(0.2)

    try:
        assert snap_compare(app, terminal_size=(110, 36), run_before=pane)
    finally:
        app.runtime.close()


async def test_the_status_keeps_the_subagents_cost_after_a_rewind(tmp_path: Path) -> None:
    """The money on the status line is the session's and its SubAgents'; showing the session
    again (a /rewind) must not drop the children's part."""
    usage = Usage(input_tokens=100_000, output_tokens=1_000)
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(tool_calls=[spawn("toolu_a", "job A: count", "counter")]),
                ScriptedReply(text="Counted."),
            ],
            "job A": [ScriptedReply(text="Forty-two.", usage=usage)],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate a count")
        await until(pilot, lambda: child_states(app).get("counter") == "done", what="the child")
        child_cost = app.agents_ui.cost()
        before = app.status.status.cost_usd
        assert child_cost and before is not None and before > child_cost > 0.2
        await send(pilot, "/rewind", wait=False)
        await pilot.press("enter", "enter")  # before the only prompt: code and conversation
        await until(pilot, lambda: app.prompt_area.text == "orchestrate a count", what="rewound")
        after = app.status.status.cost_usd
        assert after is not None and abs(after - before) < 1e-9  # money spent stays spent
    app.runtime.close()


async def test_no_rewind_while_a_subagent_may_be_writing(tmp_path: Path) -> None:
    from peri_cli.session.transcript import RewindMarker

    router = Router(
        {
            "orchestrate": [
                ScriptedReply(tool_calls=[background("toolu_a", "job A: wait", "waiter")]),
                ScriptedReply(text="Started."),
            ],
            "job A": [ScriptedReply(tool_calls=[SLEEP])],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate a wait")
        await until(pilot, running(app, 1), what="the child")
        await send(pilot, "/rewind", wait=False)
        await pilot.press("enter", "enter")
        await until(pilot, lambda: "Not rewound" in notices(app), what="the refusal")
        session = app.agent.session
        assert not any(isinstance(e, RewindMarker) for e in session.entries)
        assert app.prompt_area.text == ""
        await app.agents_ui.stop_all()
    app.runtime.close()


async def test_the_next_question_gets_the_keys_when_one_is_answered(tmp_path: Path) -> None:
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(
                    tool_calls=[
                        background("toolu_a", "job A: touch", "toucher a"),
                        background("toolu_b", "job B: touch", "toucher b"),
                    ]
                ),
                ScriptedReply(text="Started."),
            ],
            "job A": [ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "touch a"})])],
            "job B": [ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "touch b"})])],
        }
    )
    app = make_app(tmp_path, router, mode="default")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "orchestrate two", wait=False)
        await until(pilot, lambda: len(app.query(PermissionPrompt)) == 2, what="two questions")
        first = app.approvals.pending
        await until(pilot, lambda: app.focused is first, what="the first has the keys")
        await pilot.press("y")
        await until(pilot, lambda: app.approvals.pending not in (None, first), what="the next")
        second = app.approvals.pending
        await until(pilot, lambda: app.focused is second, what="the second has the keys")
        await pilot.press("n")
        await until(pilot, lambda: app.approvals.pending is None, what="both answered")
        assert app.focused is app.prompt_area.input
    app.runtime.close()


async def test_a_subagents_report_is_drawn_as_markdown_in_its_fold(tmp_path: Path) -> None:
    """Issue 42: the report showed its Markdown as typed (`**`, `#`, backticks)."""
    router = Router(
        {
            "orchestrate": [
                ScriptedReply(tool_calls=[spawn("toolu_m", "job M: sum up", "summary job")]),
                ScriptedReply(text="Read it."),
            ],
            "job M": [ScriptedReply(text="# Findings\n\n- **one** thing\n- `two` things\n")],
        }
    )
    app = make_app(tmp_path, router)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "orchestrate a summary", wait=False)
        await until(pilot, lambda: not app.busy, what="the turn")
        found = card(app, "toolu_m")
        found.collapsed = False
        await pilot.pause(0.2)
        shown = screen_text(app)
        assert "Findings" in shown and "one thing" in shown and "two things" in shown
        assert "**one**" not in shown and "# Findings" not in shown and "`two`" not in shown
    app.runtime.close()
