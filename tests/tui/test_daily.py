"""Issue 15, the daily driver, in the real app (Pilot) over the scripted provider: @ attachments,
pasted images, `!` shell mode, Ctrl+R, Shift+Tab, live Bash output, /rewind, /cost, /copy,
/init and notifications."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from textual import events

from peri_cli.base.messages import ImagePart, TextPart, ToolResultPart
from peri_cli.base.provider import ModelRequest
from peri_cli.permissions.rule_syntax import RuleSource, parse_rule
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.session.transcript import MessageEntry, RewindMarker
from peri_cli.tui.app import PeriApp
from peri_cli.tui.history import PromptHistory
from peri_cli.tui.screens.history_search import HistorySearch
from peri_cli.tui.screens.rewind_picker import RewindPicker
from peri_cli.tui.widgets.permission_prompt import PermissionPrompt
from peri_cli.tui.widgets.tool_call import ToolCallView
from tests.tui.harness import FIXED_NOW, make_runtime, screen_text, send, until

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _text(request: ModelRequest) -> str:
    """Every text the request's messages carry (tool results included)."""
    out: list[str] = []
    for message in request.messages:
        for part in message.content:
            if isinstance(part, TextPart | ToolResultPart):
                out.append(part.text)
    return "\n".join(out)


def _app(runtime: Any, **kwargs: Any) -> PeriApp:
    history = kwargs.pop("history", PromptHistory(None))
    return PeriApp(runtime, clock=lambda: FIXED_NOW, history=history, **kwargs)


async def test_at_path_attaches_the_file_as_read_gives_it(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    ws = runtime.workspace
    (ws / "notes.txt").write_text("hello attach\nsecond line\n")
    (ws / "src").mkdir()
    (ws / "src" / "mod.py").write_text("x = 1\n")
    (ws / "secret.txt").write_text("TOP SECRET\n")
    os.mkfifo(ws / "pipe")
    (tmp_path / "outside.txt").write_text("OUTSIDE\n")
    (ws / "link.txt").symlink_to(tmp_path / "outside.txt")
    assert runtime.agent is not None
    runtime.agent.policy.rules.add(parse_rule("Read(./secret.txt)", "deny", RuleSource("user")))
    app = _app(runtime)
    async with app.run_test(size=(110, 40)) as pilot:
        prompt = "look at @notes.txt and @src, also @secret.txt @pipe @link.txt, mail a@b.c."
        await send(pilot, prompt)
        screen = screen_text(app)
    text = _text(runtime._provider.requests[-1])  # type: ignore[union-attr]
    assert "     1\thello attach" in text and "     2\tsecond line" in text
    assert "[Attached folder @src" in text and "mod.py" in text
    assert "TOP SECRET" not in text and "OUTSIDE" not in text
    assert "Attached @notes.txt, @src" in screen
    assert "secret.txt: not attached, a deny rule covers it" in screen
    assert "@pipe: not attached" in screen and "@link.txt: not attached" in screen
    # stored as its own entry with an origin: never a typed turn
    entries = [e for e in runtime.agent.session.entries if isinstance(e, MessageEntry)]
    assert (entries[1].model_extra or {}).get("origin") == "attachment"
    assert entries[0].message.text == prompt


async def test_a_pasted_image_path_attaches_the_image(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    shot = tmp_path / "Screen Shot.png"
    shot.write_bytes(PNG)
    app = _app(runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt_area.input.insert("what is this ")
        app.prompt_area.input.post_message(events.Paste(str(shot).replace(" ", "\\ ")))
        await until(pilot, lambda: "[image #1]" in app.prompt_area.text)
        app.prompt_area.input.post_message(events.Paste("just text"))
        await until(pilot, lambda: "just text" in app.prompt_area.text)
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy)
    request = runtime._provider.requests[-1]  # type: ignore[union-attr]
    images = [p for m in request.messages for p in m.content if isinstance(p, ImagePart)]
    assert len(images) == 1 and images[0].media_type == "image/png"
    assert base64.b64decode(images[0].data) == PNG


async def test_bang_runs_a_shell_command_and_the_model_sees_it(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)  # default mode: no approval is asked for `!`
    (runtime.workspace / "marker.txt").write_text("")
    app = _app(runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "!ls && echo $ANTHROPIC_API_KEY-gone")
        views = list(app.query(ToolCallView))
        assert views and views[-1].output is not None and "marker.txt" in views[-1].output
        assert not views[-1].collapsed and "marker.txt" in screen_text(app)  # open, not folded
        assert not list(app.query(PermissionPrompt))
        assert runtime._provider.requests == []  # type: ignore[union-attr]
        await send(pilot, "what did it say?")
    text = _text(runtime._provider.requests[-1])  # type: ignore[union-attr]
    assert "$ ls && echo $ANTHROPIC_API_KEY-gone" in text and "marker.txt" in text
    assert "\n-gone" in text  # the scrubbed environment: no provider key


async def test_ctrl_r_searches_the_history_this_workspace_first(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    history = PromptHistory(tmp_path / "history.jsonl")
    history.add("fix the parser", workspace="/elsewhere")
    history.add("format the code", workspace=str(runtime.workspace))
    history.add("unrelated", workspace=str(runtime.workspace))
    app = _app(runtime, history=history)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, HistorySearch))
        await pilot.press("f", "r")
        screen = app.screen
        assert isinstance(screen, HistorySearch)
        assert screen.found == ["format the code", "fix the parser"]
        await pilot.press("down", "enter")
        await until(pilot, lambda: not isinstance(app.screen, HistorySearch))
        assert app.prompt_area.text == "fix the parser"


async def test_shift_tab_cycles_the_mode_shown_on_the_status_bar(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = _app(runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        seen = []
        for _ in range(4):
            await pilot.press("shift+tab")
            seen.append(app.status.status.mode)
        assert seen == ["accept-edits", "plan", "default", "accept-edits"]
        assert runtime.agent is not None and runtime.agent.policy.mode == "accept-edits"
        assert "accept-edits" in screen_text(app).splitlines()[-2]
    (tmp_path / "b").mkdir()
    started = make_runtime(tmp_path / "b", mode="bypass")
    app = _app(started)
    async with app.run_test(size=(100, 30)) as pilot:
        seen = []
        for _ in range(4):
            await pilot.press("shift+tab")
            seen.append(app.status.status.mode)
        assert seen == ["default", "accept-edits", "plan", "bypass"]


async def test_a_running_bash_call_streams_its_output_into_its_fold(tmp_path: Path) -> None:
    command = "echo first-line; sleep 0.6; echo second-line; sleep 0.6; echo done-line"
    reply = ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": command})])
    runtime = make_runtime(tmp_path, [reply], mode="bypass")
    app = _app(runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "run it", wait=False)
        await until(pilot, lambda: list(app.query(ToolCallView)))
        view = app.query_one(ToolCallView)
        await until(
            pilot,
            lambda: view.output is None and "first-line" in str(view._result_text or ""),
            what="the first line while it runs",
        )
        assert not view.collapsed
        assert "tokens" in str(app.status.render()) or app.status.status.busy_since is not None
        await until(pilot, lambda: not app.busy)
        assert view.output is not None and "done-line" in view.output


async def test_rewind_enter_enter_undoes_the_last_prompt(tmp_path: Path) -> None:
    replies = [
        ScriptedReply(text="first answer"),
        ScriptedReply(
            tool_calls=[ScriptedCall("Write", {"file_path": "a.txt", "content": "by peri\n"})]
        ),
        ScriptedReply(text="wrote it"),
    ]
    runtime = make_runtime(tmp_path, replies, mode="accept-edits")
    (runtime.workspace / "a.txt").write_text("original\n")
    app = _app(runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "first prompt")
        await send(pilot, "please write a.txt")
        assert (runtime.workspace / "a.txt").read_text() == "by peri\n"
        await send(pilot, "/rewind", wait=False)
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("enter")  # the newest prompt is selected
        await pilot.press("enter")  # code and conversation, the first choice
        await until(pilot, lambda: not isinstance(app.screen, RewindPicker) and not app.busy)
        await until(pilot, lambda: app.prompt_area.text == "please write a.txt")
        assert app.prompt_area.input.cursor_location == (0, len("please write a.txt"))
        assert (runtime.workspace / "a.txt").read_text() == "original\n"
        screen = screen_text(app)
        assert "wrote it" not in screen and "first answer" in screen
        assert "Restored: a.txt" in screen
        app.prompt_area.clear()
        await send(pilot, "something else")
    text = _text(runtime._provider.requests[-1])  # type: ignore[union-attr]
    assert "first prompt" in text and "something else" in text
    assert "please write a.txt" not in text and "by peri" not in text
    assert runtime.agent is not None
    assert any(isinstance(e, RewindMarker) for e in runtime.agent.session.entries)


async def test_escape_twice_on_an_empty_idle_prompt_opens_rewind(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = _app(runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "a prompt")
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("down")  # a second stage: the three choices
        await pilot.press("escape")  # back to the prompts
        await pilot.press("escape")  # closed
        await until(pilot, lambda: not isinstance(app.screen, RewindPicker))


async def test_code_rewind_refuses_a_file_changed_outside_and_offers_to_overwrite(
    tmp_path: Path,
) -> None:
    replies = [
        ScriptedReply(tool_calls=[ScriptedCall("Write", {"file_path": "a.txt", "content": "p\n"})]),
        ScriptedReply(text="done"),
    ]
    runtime = make_runtime(tmp_path, replies, mode="accept-edits")
    app = _app(runtime)
    async with app.run_test(size=(110, 30)) as pilot:
        await send(pilot, "create a.txt")
        (runtime.workspace / "a.txt").write_text("edited by hand\n")
        await send(pilot, "/rewind", wait=False)
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("enter", "down", "down", "enter")  # code only
        await until(pilot, lambda: "Overwrite them" in screen_text(app), what="the offer")
        assert (runtime.workspace / "a.txt").read_text() == "edited by hand\n"
        await pilot.press("down", "enter")
        await until(pilot, lambda: not (runtime.workspace / "a.txt").exists())
        assert app.prompt_area.text == ""  # code only: the conversation stays


async def test_cost_copy_and_init(tmp_path: Path) -> None:
    reply = "Here:\n\n```python\nprint('hi')\n```\n\nand more."
    runtime = make_runtime(tmp_path, [ScriptedReply(text=reply)])
    (runtime.workspace / "CLAUDE.md").write_text("# old guide\n")
    app = _app(runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/copy")
        assert "Nothing to copy" in screen_text(app)
        await send(pilot, "show code")
        await send(pilot, "/copy")
        assert app.clipboard == reply
        await send(pilot, "/copy 1")
        assert app.clipboard == "print('hi')\n"
        await send(pilot, "/copy 7")
        assert "No code block 7" in screen_text(app)
        await send(pilot, "/cost")
        screen = screen_text(app)
        assert "cache read" in screen and "this session" in screen
        await send(pilot, "/init")
    text = _text(runtime._provider.requests[-1])  # type: ignore[union-attr]
    assert "Improve the project guide CLAUDE.md" in text and "AGENTS.md" not in text


async def test_notifications_for_a_long_turn_and_an_unfocused_approval(tmp_path: Path) -> None:
    replies = [
        ScriptedReply(text="quick"),
        ScriptedReply(tool_calls=[ScriptedCall("Write", {"file_path": "x", "content": "1"})]),
    ]
    runtime = make_runtime(tmp_path, replies)
    app = _app(runtime, long_turn=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "hello")
        assert app.notifications == []  # the terminal has focus: the user sees it end
        app.post_message(events.AppBlur())
        await pilot.pause(0.05)
        await send(pilot, "write x", wait=False)
        await until(pilot, lambda: list(app.query(PermissionPrompt)))
        await until(pilot, lambda: "Peri is waiting for your approval" in app.notifications)
        await pilot.press("n")
        await until(pilot, lambda: not app.busy)
    (tmp_path / "q").mkdir()
    quiet = make_runtime(tmp_path / "q", [ScriptedReply(text="quick")])
    quiet.settings = quiet.settings.model_copy(update={"notifications": False})
    app = _app(quiet, long_turn=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(events.AppBlur())
        await pilot.pause(0.05)
        await send(pilot, "hello")
        assert app.notifications == []  # `notifications: false` is `notifications_disabled`


async def test_help_lists_the_new_commands_keys_and_prompt_forms(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    app = _app(runtime)
    async with app.run_test(size=(150, 80)) as pilot:
        await send(pilot, "/help")
        screen = screen_text(app)
    for shown in ("/rewind", "/init", "/cost", "/copy [N]", "Shift+Tab", "Ctrl+R", "Esc Esc"):
        assert shown in screen, shown
    for shown in ("@path", "!command", "paste an image"):
        assert shown in screen, shown
