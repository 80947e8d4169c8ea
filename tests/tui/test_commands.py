"""Pilot tests of the slash commands and the prompt's completion and history."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from peri_cli.providers.scripted import ScriptedProvider, ScriptedReply
from peri_cli.session.transcript import ClearMarker, CompactBoundary
from peri_cli.tui.app import PeriApp
from peri_cli.tui.history import PromptHistory
from peri_cli.tui.screens.context_view import ContextView
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.notice import NoticeLine
from peri_cli.tui.widgets.separator import Separator

from .harness import FIXED_NOW, make_runtime, screen_text, send, until
from .test_turns import notices


async def test_clear_clears_the_screen_too(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="first answer")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "hello")
        assert runtime.agent.view()
        await send(pilot, "/clear")
        await until(pilot, lambda: app.query(Separator), what="the separator")
        separator = app.query_one(Separator)
        assert "Cleared" in separator.description and "→" in separator.description
        assert isinstance(runtime.agent.session.entries[-1], ClearMarker)
        assert runtime.agent.view() == []
        # the screen is cleared too: one "cleared" separator remains
        shown = [w for w in app.conversation.children if w.display]
        assert shown == [separator]
        assert not app.query(AssistantMessage) and not app.query(NoticeLine)
    runtime.close()


async def test_compact_on_an_empty_history_says_so_without_calling_the_model(
    tmp_path: Path,
) -> None:
    runtime = make_runtime(tmp_path)
    provider = runtime._provider
    assert isinstance(provider, ScriptedProvider)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/compact ")  # (the space: Enter sends, not completes)
        note = next(n for n in app.query(NoticeLine) if "Nothing to compact" in n.text)
        assert note.level == "info"
        assert provider.requests == [] and not app.query(Separator)
    runtime.close()


async def test_compact_summarizes_and_says_what_it_freed(tmp_path: Path) -> None:
    replies = [
        ScriptedReply(text="A long answer. " * 40),
        ScriptedReply(text="<summary>The user said hello; nothing else is pending.</summary>"),
    ]
    runtime = make_runtime(tmp_path, replies)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "hello")
        if getattr(runtime.agent.compactor, "compact_now", None) is None:
            await send(pilot, "/compact")
            assert "not available" in notices(app)
            return
        await send(pilot, "/compact greetings")
        await until(pilot, lambda: app.query(Separator), what="the separator")
        separator = app.query_one(Separator)
        text = separator.description
        assert "Compacted (Full)" in text and "freed" in text and "focus: greetings" in text
        assert any(isinstance(e, CompactBoundary) for e in runtime.agent.session.entries)
        # the separator expands to show the summary text
        assert separator.fold is not None and separator.fold.collapsed
        assert "The user said hello" in separator.fold.text
        separator.fold.collapsed = False
        await pilot.pause()
        assert "The user said hello" in screen_text(app)
        # and so it does when the session is shown again (a resume)
        await app.show_session()
        await pilot.pause()
        again = app.query_one(Separator)
        assert again is not separator and again.fold is not None
        assert "The user said hello" in again.fold.text
    runtime.close()


async def test_unknown_slash_word_goes_to_the_model(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="sure")])
    provider = runtime._provider
    assert isinstance(provider, ScriptedProvider)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/frobnicate the widgets")
        await until(pilot, lambda: provider.requests)
        assert provider.requests[0].messages[-1].text == "/frobnicate the widgets"
    runtime.close()


async def test_model_mode_and_help(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/mode plan")
        assert runtime.agent.policy.mode == "plan" and app.status.status.mode == "plan"
        await send(pilot, "/mode sideways")
        assert "Unknown mode" in notices(app)
        await send(pilot, "/model claude-opus-4-5")
        assert runtime.agent.model == "claude-opus-4-5" == app.status.status.model
        await send(pilot, "/help")
        help_table = app.query_one(".help", Static).content
        cells = [str(c) for column in help_table.columns for c in column.cells]  # type: ignore[union-attr]
        assert "/compact [focus]" in cells and "Ctrl+C" in cells
    runtime.close()


async def test_context_view_shows_parts(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="hi")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "hello")
        await send(pilot, "/context")
        await until(pilot, lambda: isinstance(app.screen, ContextView), what="the context view")
        report = app.screen.report  # type: ignore[attr-defined]
        labels = [p.label for p in report.parts]
        assert labels[:2] == ["Frozen prompt", "Project guide"] and "History" in labels
        assert report.total > 0 and report.window == runtime.context_window
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ContextView))
    runtime.close()


async def test_slash_completion_with_descriptions(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("/", "c")
        menu = app.prompt_area.menu
        await until(pilot, lambda: menu.is_open)
        names = [c.label.split()[0] for c in menu.candidates]
        assert names == ["/compact", "/clear", "/context", "/cost", "/copy"]
        assert menu.candidates[0].description.startswith("Summarize")
        await pilot.press("down", "down", "enter")  # /context takes no argument: runs at once
        await until(pilot, lambda: isinstance(app.screen, ContextView), what="the context view")
        await pilot.press("escape")
        await pilot.press("/", "c", "o", "m", "tab")  # /compact takes a focus: just completes
        assert app.prompt_area.text == "/compact "
        await pilot.press("escape")
        assert not menu.is_open
    runtime.close()


async def test_at_path_completion(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    (runtime.workspace / "src").mkdir()
    (runtime.workspace / "src" / "main.py").write_text("")
    (runtime.workspace / "README.md").write_text("")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"look at @sr")
        menu = app.prompt_area.menu
        await until(pilot, lambda: menu.is_open)
        assert menu.candidates[0].label == "@src/"
        await pilot.press("tab")
        assert app.prompt_area.text == "look at @src/"
        await until(pilot, lambda: menu.is_open and menu.candidates[0].label == "@src/main.py")
        await pilot.press("tab")
        assert app.prompt_area.text == "look at @src/main.py "
        assert not menu.is_open
    runtime.close()


async def test_multiline_and_history_across_sessions(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("a", "shift+enter", "b", "ctrl+j", "c")
        assert app.prompt_area.text == "a\nb\nc"
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and app.prompt_area.text == "")
    runtime.close()
    # a new session in a new process: the history file brings the prompt back
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"draft")
        await pilot.press("up")
        assert app.prompt_area.text == "a\nb\nc"
        await pilot.press("down")
        assert app.prompt_area.text == "draft"
    runtime.close()
    assert PromptHistory(runtime.peri_home / "history.jsonl").entries == ["a\nb\nc"]


async def test_ctrl_c_twice_quits_when_idle(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"typed")
        await pilot.press("ctrl+c")  # first clears the prompt
        assert app.prompt_area.text == "" and app.is_running
        await pilot.press("ctrl+c")
        assert app.is_running  # armed, not yet quitting
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, what="the app to quit")
    assert app.return_code == 0
    runtime.close()
