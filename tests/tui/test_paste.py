"""Issue 37 item 9 in the app (Pilot): a paste lands in the prompt once, exactly; 20 lines or
more show as `[Pasted text #N +L lines]`, are sent whole, and Up brings the whole text back.
(The real-terminal version is `tests/e2e/test_tmux_paste.py`.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events
from textual.widgets.text_area import Selection

from peri_cli.base.messages import TextPart
from peri_cli.providers.scripted import ScriptedReply
from peri_cli.session.transcript import MessageEntry
from peri_cli.tui.app import PeriApp
from peri_cli.tui.history import PromptHistory
from peri_cli.tui.widgets.user_message import UserMessage
from tests.tui.harness import FIXED_NOW, make_runtime, until

SNIPPET = "def f():\n    return 1\n\n\tx = 2  # tab"
LOG = "\n".join(f"line {i} of the log" for i in range(1, 26))


def _app(tmp_path: Path, replies: int = 2) -> tuple[Any, PeriApp]:
    runtime = make_runtime(tmp_path, [ScriptedReply(text=f"reply {i}") for i in range(replies)])
    history = PromptHistory(tmp_path / "history.jsonl")
    return runtime, PeriApp(runtime, clock=lambda: FIXED_NOW, history=history)


def _sent(runtime: Any, index: int = -1) -> str:
    """The text of the last user message of request `index`, as the provider got it."""
    message = runtime._provider.requests[index].messages[-1]
    return "".join(p.text for p in message.content if isinstance(p, TextPart))


async def _paste(pilot: Any, app: PeriApp, text: str, before: str) -> None:
    """A bracketed paste as the driver delivers it: to the app, which forwards it to the
    focused widget."""
    app.post_message(events.Paste(text))
    await until(pilot, lambda: app.prompt_area.text != before, what="the paste")
    await pilot.pause()


async def test_a_paste_lands_once_exactly(tmp_path: Path) -> None:
    runtime, app = _app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt_area.input.insert("see: ")
        await _paste(pilot, app, SNIPPET, "see: ")
        assert app.prompt_area.text == "see: " + SNIPPET
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and bool(runtime._provider.requests))
    assert _sent(runtime) == "see: " + SNIPPET
    runtime.close()


async def test_a_paste_with_cr_line_breaks_is_held_as_lines(tmp_path: Path) -> None:
    """Terminals send a paste's line breaks as CR."""
    runtime, app = _app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await _paste(pilot, app, SNIPPET.replace("\n", "\r"), "")
        assert app.prompt_area.text == SNIPPET
    runtime.close()


async def test_a_paste_replaces_the_selection(tmp_path: Path) -> None:
    runtime, app = _app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = app.prompt_area.input
        prompt.insert("keep REPLACE keep")
        prompt.selection = Selection((0, 5), (0, 12))
        await _paste(pilot, app, "new", "keep REPLACE keep")
        assert app.prompt_area.text == "keep new keep"
    runtime.close()


async def test_a_long_paste_is_one_tag_sent_whole_and_up_brings_the_whole_text(
    tmp_path: Path,
) -> None:
    runtime, app = _app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt_area.input.insert("why? ")
        await _paste(pilot, app, LOG, "why? ")
        assert app.prompt_area.text == "why? [Pasted text #1 +25 lines]"
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and len(runtime._provider.requests) == 1)
        assert _sent(runtime) == "why? " + LOG
        shown = [w.text for w in app.query(UserMessage)]
        assert shown == ["why? " + LOG]
        await pilot.press("up")
        assert app.prompt_area.text == "why? " + LOG
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and len(runtime._provider.requests) == 2)
        assert _sent(runtime) == "why? " + LOG
    prompts = [
        e.message.text
        for e in runtime.session.entries
        if isinstance(e, MessageEntry) and e.message.role == "user"
    ]
    assert prompts == ["why? " + LOG, "why? " + LOG]
    assert PromptHistory(tmp_path / "history.jsonl").entries == ["why? " + LOG]
    runtime.close()


async def test_each_long_paste_has_its_number_and_an_edited_tag_stays_as_typed(
    tmp_path: Path,
) -> None:
    runtime, app = _app(tmp_path)
    other = "\n".join(f"other {i}" for i in range(40))
    async with app.run_test(size=(100, 30)) as pilot:
        await _paste(pilot, app, LOG, "")
        before = app.prompt_area.text
        app.prompt_area.input.insert(" and ")
        await _paste(pilot, app, other, before + " and ")
        assert app.prompt_area.text == "[Pasted text #1 +25 lines] and [Pasted text #2 +40 lines]"
        app.prompt_area.set_text("[Pasted text #1 +24 lines] then [Pasted text #2 +40 lines]")
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and bool(runtime._provider.requests))
    assert _sent(runtime) == "[Pasted text #1 +24 lines] then " + other
    runtime.close()


async def test_a_paste_under_twenty_lines_stays_text(tmp_path: Path) -> None:
    runtime, app = _app(tmp_path)
    nineteen = "\n".join(f"row {i}" for i in range(19))
    async with app.run_test(size=(100, 30)) as pilot:
        await _paste(pilot, app, nineteen, "")
        assert app.prompt_area.text == nineteen
    runtime.close()
