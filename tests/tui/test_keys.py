"""Issue 10: one key table for the whole TUI. Esc, first match wins: close a popup or menu; deny
a pending approval; return focus to the prompt; interrupt the running turn; it never clears typed
text. Printable keys always reach the prompt. The conversation stays where the user is."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static
from textual.widgets._footer import FooterKey

from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.context_view import ContextView
from peri_cli.tui.widgets.fold import Fold
from peri_cli.tui.widgets.permission_prompt import ApprovalRecord
from peri_cli.tui.widgets.tool_call import ToolCallView

from .harness import FIXED_NOW, GatedProvider, make_runtime, send, until
from .test_turns import notices

SLEEP = ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 30"})])


def long_text(n: int = 80, word: str = "line") -> str:
    return "\n\n".join(f"{word} {i}" for i in range(n))


async def test_esc_interrupts_the_running_turn_and_keeps_typed_text(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [SLEEP, ScriptedReply(text="back")], mode="bypass")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "sleep", wait=False)
        await until(pilot, lambda: app.query(ToolCallView) and app.busy, what="the tool")
        await until(pilot, lambda: app.query_one(ToolCallView).state == "running")
        await send(pilot, "queued one", wait=False)
        assert app.queue == ["queued one"]
        await pilot.press(*"draft")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, what="the cancel")
        assert "Interrupted" in notices(app)
        assert app.query_one(ToolCallView).state == "cancelled"
        # Esc never clears typed text: what was queued comes back too, nothing was sent
        assert app.prompt_area.text == "queued one\ndraft" and not app.queue
        assert len(runtime._provider.requests) == 1  # type: ignore[union-attr]
        await pilot.press("escape")  # idle, focus on the prompt: nothing to do, nothing lost
        assert app.is_running and app.prompt_area.text == "queued one\ndraft"
    runtime.close()


async def test_esc_closes_a_menu_before_it_interrupts(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [SLEEP], mode="bypass")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "sleep", wait=False)
        await until(pilot, lambda: app.query(ToolCallView) and app.busy, what="the tool")
        await pilot.press("/", "c")
        await until(pilot, lambda: app.prompt_area.menu.is_open)
        await pilot.press("escape")
        assert not app.prompt_area.menu.is_open and app.busy  # the menu closed, the turn runs
        assert app.prompt_area.text == "/c"
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, what="the cancel")
    runtime.close()


async def test_esc_closes_a_popup_screen(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/context", wait=False)
        await until(pilot, lambda: isinstance(app.screen, ContextView))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ContextView))
        assert app.is_running
    runtime.close()


async def test_esc_denies_a_pending_approval_from_anywhere(tmp_path: Path) -> None:
    call = ScriptedCall("Bash", {"command": "touch x"})
    runtime = make_runtime(tmp_path, [ScriptedReply(tool_calls=[call]), ScriptedReply(text="ok")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "touch", wait=False)
        await until(pilot, lambda: app.approvals.pending is not None, what="the approval")
        app.prompt_area.input.focus()  # the user went back to the prompt to type
        await pilot.press(*"note")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy)
        assert [r.answer for r in app.query(ApprovalRecord)] == ["deny"]
        assert not (runtime.workspace / "x").exists()
        assert app.prompt_area.text == "note"
    runtime.close()


async def test_once_a_fold_has_focus_typed_text_still_reaches_the_prompt(tmp_path: Path) -> None:
    call = ScriptedCall("Bash", {"command": "echo one; echo two"})
    runtime = make_runtime(
        tmp_path, [ScriptedReply(tool_calls=[call]), ScriptedReply(text="ok")], mode="bypass"
    )
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "echo")
        app.query_one(ToolCallView)._title.focus()
        await pilot.pause()
        await pilot.press("enter")  # Enter toggles the focused fold
        assert not app.query_one(ToolCallView).collapsed
        await pilot.press(*"fix it")
        assert app.prompt_area.text == "fix it"
        assert app.focused is app.prompt_area.input
        app.query_one(ToolCallView)._title.focus()
        await pilot.pause()
        await pilot.press("escape")  # Esc returns focus to the prompt, and clears nothing
        assert app.focused is app.prompt_area.input and app.prompt_area.text == "fix it"
    runtime.close()


async def test_ctrl_o_toggles_the_folds(tmp_path: Path) -> None:
    reply = ScriptedReply(thinking="pondering", text="answer")
    runtime = make_runtime(tmp_path, [reply])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "think")
        fold = app.query_one(Fold)
        assert fold.collapsed
        await pilot.press("ctrl+o")
        assert not fold.collapsed
        await pilot.press("ctrl+o")
        assert fold.collapsed
    runtime.close()


async def test_help_lists_the_one_key_table(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "/help")
        table = app.query_one(".help", Static).content
        cells = [str(c) for column in table.columns for c in column.cells]  # type: ignore[union-attr]
        for key in ("Esc", "Enter", "↑ / ↓", "PgUp / PgDn", "Ctrl+End", "Ctrl+O", "Ctrl+C"):
            assert key in cells, key
        text = " ".join(cells)
        assert "fold" in text and "interrupt" in text and "never clears" in text
    runtime.close()


# the conversation stays where the user is


async def test_streaming_follows_the_bottom(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    provider = GatedProvider(ScriptedProvider([ScriptedReply(text=long_text())]), 40)
    runtime._provider = provider
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    conversation = app.conversation
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "talk", wait=False)
        await until(pilot, provider.held.is_set)
        await pilot.pause(0.1)
        assert conversation.max_scroll_y > 0 and conversation.following
        provider.gate.set()
        await until(pilot, lambda: not app.busy)
        await pilot.pause()
        assert conversation.scroll_y == conversation.max_scroll_y
        assert not conversation.hint.display
    runtime.close()


async def test_scrolled_away_the_view_stays_and_says_new_output(tmp_path: Path) -> None:
    replies = [ScriptedReply(text=long_text(word="first")), ScriptedReply(text=long_text())]
    runtime = make_runtime(tmp_path)
    provider = GatedProvider(ScriptedProvider(replies), 20)
    runtime._provider = provider
    provider.gate.set()
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    conversation = app.conversation
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "first")
        provider.gate.clear()
        await send(pilot, "second", wait=False)
        await until(pilot, provider.held.is_set)
        await pilot.pause(0.1)
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        where = conversation.scroll_y
        assert where < conversation.max_scroll_y and not conversation.following
        provider.gate.set()
        await until(pilot, lambda: not app.busy)
        await pilot.pause()
        assert conversation.scroll_y == where  # new output did not move the reader
        assert conversation.hint.display  # ... but said it is there
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert conversation.scroll_y == conversation.max_scroll_y and conversation.following
        assert not conversation.hint.display
        await pilot.press("pageup")
        await pilot.pause()
        assert not conversation.following
        await send(pilot, "third")  # sending returns to the bottom
        await pilot.pause()
        assert conversation.following and conversation.scroll_y == conversation.max_scroll_y
    runtime.close()


async def test_expanding_a_fold_at_the_bottom_keeps_following(tmp_path: Path) -> None:
    replies = [
        ScriptedReply(thinking=long_text(20, "thought"), text="short"),
        ScriptedReply(text=long_text()),
    ]
    runtime = make_runtime(tmp_path, replies)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    conversation = app.conversation
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "think")
        await pilot.press("ctrl+o")  # expand the thinking
        await pilot.pause()
        await send(pilot, "more")
        await pilot.pause()
        assert conversation.following and conversation.scroll_y == conversation.max_scroll_y
    runtime.close()


async def test_the_status_bar_names_model_and_mode_at_60_columns(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [SLEEP], mode="bypass")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "sleep", wait=False)
        await until(pilot, lambda: app.query(ToolCallView) and app.busy)
        await pilot.pause()
        line = app.status.render().plain
        assert "claude-sonnet-4-5" in line and "bypass" in line and "running Bash" in line
        assert app.status.region.y + 1 >= app.size.height - 1  # on the bottom lines
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.busy)
    runtime.close()


async def test_the_footer_is_rebuilt_only_when_the_keys_it_shows_change(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.ready and app.query(FooterKey), what="the footer")
        keys = list(app.query(FooterKey))
        assert "Send" in [k.description for k in keys]  # the prompt's Enter, while it has focus
        app.screen.refresh_bindings()  # what a focus change or the terminal's focus-in does
        app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert list(app.query(FooterKey)) == keys  # the same widgets: nothing rebuilt
        app.set_focus(None)  # the prompt's keys are no longer live
        await until(pilot, lambda: list(app.query(FooterKey)) != keys, what="a rebuild")
        assert "Send" not in [k.description for k in app.query(FooterKey)]
        app.prompt_area.input.focus()
        await until(pilot, lambda: "Send" in [k.description for k in app.query(FooterKey)])
    runtime.close()
