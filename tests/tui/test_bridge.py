"""How each loop event looks: a synthetic event stream through the app's one bridge."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from peri_cli.base.events import (
    Compacted,
    CompactFailed,
    CompactWarning,
    Event,
    Notice,
    PermissionAnswer,
    PermissionRequested,
    TurnEnded,
    TurnStarted,
)
from peri_cli.base.provider import TextDelta, ThinkingDelta, ToolUseStarted
from peri_cli.base.retry import Retrying
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.session.transcript import MessageEntry
from peri_cli.tui.app import PeriApp
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.folded_text import FoldedText
from peri_cli.tui.widgets.permission_prompt import PermissionPrompt
from peri_cli.tui.widgets.separator import Separator
from peri_cli.tui.widgets.tool_call import ToolCallView

from .harness import FIXED_NOW, make_runtime, send, until
from .test_turns import notices


async def scripted(events: list[Event]) -> AsyncIterator[Event]:
    for event in events:
        yield event
        await asyncio.sleep(0)


async def test_every_event_kind_is_shown(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    events: list[Event] = [
        TurnStarted(1),
        ThinkingDelta("pondering"),
        TextDelta("partial that will be retried"),
        ToolUseStarted("x1", "Read"),
        Retrying(2, 0.5, "529 overloaded"),
        TurnStarted(2),
        TextDelta("fresh reply"),
        CompactWarning(0.91, 0.95),
        Compacted("micro", 90_000, 60_000, 3),
        CompactFailed("the summary came back empty"),
        Notice("MCP server git failed to start", "warning"),
        TurnEnded("max_turns", "stopped after 2 model calls (--max-turns)"),
    ]
    async with app.run_test(size=(100, 40)) as pilot:
        await app.run_events(scripted(events))
        await until(pilot, lambda: not app.busy)
        shown = notices(app)
        assert "Retrying" not in shown  # transient: only the status said it
        assert "91% full" in shown and "95%" in shown
        assert "Compaction failed: the summary came back empty" in shown
        assert "MCP server git failed" in shown and "--max-turns" in shown
        # the retried attempt's partial reply and tool call are gone
        assert [a.text for a in app.query(AssistantMessage)] == ["fresh reply"]
        assert not app.query(ToolCallView) and not app.query(FoldedText)
        separator = app.query_one(Separator).description
        assert "Micro" in separator and "90.0k → 60.0k" in separator and "freed 30.0k" in separator
        assert app.status.status.context_tokens == 60_000


async def test_retry_notices_are_transient(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    gate = asyncio.Event()

    async def events() -> AsyncIterator[Event]:
        yield TurnStarted(1)
        yield Retrying(2, 0.5, "529 overloaded")
        await gate.wait()
        yield TurnStarted(2)
        yield TextDelta("fresh reply")
        yield TurnEnded("done")

    async with app.run_test(size=(100, 30)) as pilot:
        await app.run_events(events())
        await until(pilot, lambda: "retrying" in app.status.status.activity)
        assert app.status.status.activity == "retrying (2/5) in 0.5s: 529 overloaded"
        assert "Retrying" not in notices(app) and "529" not in notices(app)
        gate.set()
        await until(pilot, lambda: not app.busy)
        assert "529" not in notices(app) and "retrying" not in app.status.status.activity
        assert [a.text for a in app.query(AssistantMessage)] == ["fresh reply"]
    runtime.close()


async def test_thinking_is_folded(tmp_path: Path) -> None:
    reply = ScriptedReply(thinking="Let me think about it.", text="Answer.")
    runtime = make_runtime(tmp_path, [reply])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"think", "enter")
        await until(pilot, lambda: not app.busy and app.query(AssistantMessage))
        folded = app.query_one(FoldedText)
        assert folded.collapsed and folded.text == "Let me think about it."
    runtime.close()


async def test_cancel_while_asking_leaves_no_half_turn(tmp_path: Path) -> None:
    reply = ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "rm -rf build"})])
    runtime = make_runtime(tmp_path, [reply])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "clean", wait=False)
        await until(pilot, lambda: isinstance(app.focused, PermissionPrompt), what="the prompt")
        prompt = app.query_one(PermissionPrompt)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.busy, what="the cancel")
        assert prompt.answered and prompt.answer is None
        assert prompt.future.cancelled()
        assert app.focused is app.prompt_area.input
        roles = [
            e.message.role for e in runtime.agent.session.entries if isinstance(e, MessageEntry)
        ]
        assert roles == ["user"]
    runtime.close()


def test_permission_answer_sets_the_future() -> None:
    async def run() -> PermissionAnswer:
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        PermissionRequested("Bash", {"command": "ls"}, "runs a command", future)
        prompt = PermissionPrompt("Bash", {"command": "ls"}, "runs a command", future)
        prompt.action_answer("allow_session")
        return await future

    assert asyncio.run(run()) == "allow_session"
