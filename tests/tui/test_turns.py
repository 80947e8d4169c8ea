"""Pilot tests of turns: the real loop with the scripted provider, driven through the keyboard."""

from __future__ import annotations

import time
from pathlib import Path

from peri_cli.base.messages import ToolResultPart
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.session.transcript import MessageEntry
from peri_cli.tui.app import PeriApp
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.notice import NoticeLine
from peri_cli.tui.widgets.permission_prompt import ApprovalRecord, PermissionPrompt
from peri_cli.tui.widgets.tool_call import ToolCallView
from peri_cli.tui.widgets.user_message import UserMessage

from .harness import FIXED_NOW, GatedProvider, make_runtime, screen_text, send, until

LONG = " ".join(f"word{i}" for i in range(60))


def notices(app: PeriApp) -> str:
    return "\n".join(n.text for n in app.query(NoticeLine))


async def test_prompt_streams_markdown_answer(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    provider = GatedProvider(ScriptedProvider([ScriptedReply(text=f"**Hello** {LONG}")]), 4)
    runtime._provider = provider
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hi peri", "enter")
        await until(pilot, provider.held.is_set, what="the reply to start")
        await until(pilot, lambda: app.query(AssistantMessage), what="the reply widget")
        answer = app.query_one(AssistantMessage)
        assert answer.text == "**Hello** word0 word1 word2 "  # streamed so far, shown already
        assert app.busy and app.status.status.busy_since is not None
        provider.gate.set()
        await until(pilot, lambda: not app.busy, what="the turn to end")
        assert answer.text == f"**Hello** {LONG}"
        assert len(app.query(AssistantMessage)) == 1  # the same widget grew
        assert [w.text for w in app.query(UserMessage)] == ["hi peri"]
        assert app.prompt_area.text == ""
        assert app.status.status.context_tokens and app.status.status.busy_since is None
    runtime.close()


def write_reply(path: str = "notes.txt") -> ScriptedReply:
    return ScriptedReply(
        text="I will write the file.",
        tool_calls=[ScriptedCall("Write", {"file_path": path, "content": "one\ntwo\n"})],
    )


async def test_tool_call_allowed_once(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [write_reply(), ScriptedReply(text="Written.")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "write notes", wait=False)
        await until(pilot, lambda: app.query(PermissionPrompt), what="the permission prompt")
        prompt = app.query_one(PermissionPrompt)
        await until(pilot, lambda: app.focused is prompt, what="focus on the prompt")
        await pilot.press("1")
        await until(pilot, lambda: not app.busy, what="the turn to end")
        assert prompt.answer == "allow"
        assert (runtime.workspace / "notes.txt").read_text() == "one\ntwo\n"
        view = app.query_one(ToolCallView)
        assert view.state == "done" and view.tool_input is not None
        assert app.query(AssistantMessage).last().text == "Written."
        assert app.focused is app.prompt_area.input
    runtime.close()


async def test_tool_call_denied(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [write_reply(), ScriptedReply(text="Understood.")])
    provider = runtime._provider
    assert isinstance(provider, ScriptedProvider)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "write notes", wait=False)
        await until(pilot, lambda: app.query(PermissionPrompt), what="the permission prompt")
        await until(pilot, lambda: isinstance(app.focused, PermissionPrompt))
        await pilot.press("escape")  # Esc denies
        await until(pilot, lambda: not app.busy, what="the turn to end")
        assert not (runtime.workspace / "notes.txt").exists()
        view = app.query_one(ToolCallView)
        assert view.state == "error" and "Permission denied" in (view.output or "")
        # the model was told, in a tool_result for the call
        last = provider.requests[-1].messages[-1]
        result = next(p for p in last.content if isinstance(p, ToolResultPart))
        assert result.is_error and "Permission denied" in result.text
    runtime.close()


async def test_allow_for_session_stops_asking(tmp_path: Path) -> None:
    # (a folder's files: a top-level file is offered only itself)
    replies = [write_reply("src/a.txt"), write_reply("src/b.txt"), ScriptedReply(text="Done.")]
    runtime = make_runtime(tmp_path, replies)
    (runtime.workspace / "src").mkdir()
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "write two", wait=False)
        await until(pilot, lambda: app.query(PermissionPrompt))
        await until(pilot, lambda: isinstance(app.focused, PermissionPrompt))
        await pilot.press("down", "enter")  # the second choice: allow for the session
        await until(pilot, lambda: not app.busy, what="the turn to end")
        assert [r.answer for r in app.query(ApprovalRecord)] == ["allow_session"]
        assert (runtime.workspace / "src" / "b.txt").exists()
    runtime.close()


async def test_ctrl_c_cancels_running_tool(tmp_path: Path) -> None:
    bash = ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 30"})])
    runtime = make_runtime(tmp_path, [bash, ScriptedReply(text="still here")], mode="bypass")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "sleep please", wait=False)
        await until(
            pilot,
            lambda: app.query(ToolCallView) and app.query_one(ToolCallView).state == "running",
            what="the tool to run",
        )
        started = time.monotonic()
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.busy, timeout=10, what="the cancel")
        assert time.monotonic() - started < 10
        assert app.query_one(ToolCallView).state == "cancelled"
        assert "Interrupted" in notices(app)
        # no half turn in the record: the last message is the prompt, no tool_use without result
        messages = [e.message for e in runtime.agent.session.entries if isinstance(e, MessageEntry)]
        assert [m.role for m in messages] == ["user"]
        # and the session goes on
        await send(pilot, "hello again", wait=False)
        await until(pilot, lambda: not app.busy and app.query(AssistantMessage))
        assert app.query(AssistantMessage).last().text == "still here"
    runtime.close()


async def test_typing_while_busy_queues_the_message(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    scripted = ScriptedProvider([ScriptedReply(text=LONG), ScriptedReply(text="second answer")])
    provider = GatedProvider(scripted, 3)
    runtime._provider = provider
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"first", "enter")
        await until(pilot, provider.held.is_set, what="the first reply to start")
        await pilot.press(*"second", "enter")
        assert app.queue == ["second"]
        assert app.prompt_area.queued.display
        assert len(provider.requests) == 1
        provider.gate.set()
        await until(pilot, lambda: len(provider.requests) == 2 and not app.busy, what="2nd turn")
        assert [w.text for w in app.query(UserMessage)] == ["first", "second"]
        assert app.query(AssistantMessage).last().text == "second answer"
        assert not app.prompt_area.queued.display
    runtime.close()


async def test_provider_error_is_visible(tmp_path: Path) -> None:
    from peri_cli.base.provider import ProviderError

    runtime = make_runtime(tmp_path, [ScriptedReply(error=ProviderError("bad request: nope"))])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: "bad request: nope" in notices(app), what="the error")
        error = next(n for n in app.query(NoticeLine) if "nope" in n.text)
        assert error.level == "error"
    runtime.close()


async def test_without_api_key_it_opens_and_explains(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    runtime._provider = None  # nothing injected and no key in the environment
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: "ANTHROPIC_API_KEY" in notices(app))
        text = notices(app)
        assert "ANTHROPIC_BASE_URL" in text and "OPENAI_BASE_URL" in text
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.query(UserMessage) and not app.busy)
        assert notices(app).count("No anthropic API key") == 2  # said again, nothing sent
    runtime.close()


async def test_a_bash_fold_shows_the_end_of_the_output(tmp_path: Path) -> None:
    calls = [
        ScriptedCall("Bash", {"command": "seq 1 40; echo 'error: boom'; exit 3"}, id="short"),
        ScriptedCall("Bash", {"command": "seq 1 200000"}, id="long"),
    ]
    replies = [ScriptedReply(tool_calls=calls), ScriptedReply(text="seen")]
    runtime = make_runtime(tmp_path, replies, mode="bypass")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "count")
        views = {v.call_id: v for v in app.query(ToolCallView)}
        short, long = views["short"], views["long"]
        assert "41 lines · Exit code: 3" in short.title.plain  # the count the command printed
        result = str(short._result_text)
        assert result.startswith("… 30 earlier lines")
        assert result.rstrip().endswith("error: boom\nExit code: 3")  # the end, where errors are
        assert "200000 lines" in long.title.plain  # its own count, though only a tail was kept
        assert str(long._result_text).rstrip().endswith("200000")
    runtime.close()


async def test_on_exit_it_prints_how_to_resume(tmp_path: Path) -> None:
    from peri_cli.tui.app import resume_hint

    runtime = make_runtime(tmp_path, [ScriptedReply(text="hi")])
    assert resume_hint(runtime) is None  # no message yet: nothing to resume
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "hello")
    assert resume_hint(runtime) == f"Resume this session with: peri -r {runtime.session.id}"  # type: ignore[union-attr]
    runtime.close()


async def test_a_cancelled_turn_is_one_dim_line_and_the_model_gets_the_note(
    tmp_path: Path,
) -> None:
    bash = ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 30"})])
    runtime = make_runtime(tmp_path, [bash], mode="bypass")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "sleepy tool", wait=False)
        await until(pilot, lambda: app.query(ToolCallView) and app.busy)
        await until(pilot, lambda: app.query_one(ToolCallView).state == "running")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, what="the cancel")
        note = runtime.agent.last_interruption
        assert note is not None and "interrupted" in note  # recorded for the model...
        lines = [n for n in app.query(NoticeLine) if "nterrupt" in n.text]
        assert [(n.text, n.level) for n in lines] == [("Interrupted", "info")]  # ...not shown
        assert "were not kept" not in screen_text(app)
    runtime.close()
