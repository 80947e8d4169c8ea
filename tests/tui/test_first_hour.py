"""What a new user stumbled on in their first hour (issue 42), each as the TUI shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.providers.scripted import ScriptedProvider, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.completion import near_command

from .harness import FIXED_NOW, make_runtime, screen_text, send, until


def test_a_word_near_a_command_is_caught_and_a_path_is_not() -> None:
    assert near_command("/comapct") == "compact"
    assert near_command("/contxt please") == "context"
    assert near_command("/compact") is None  # a command is no typo
    assert near_command("/etc/hosts is odd") is None  # a path goes to the model
    assert near_command("/zzzzzz") is None  # near nothing
    assert near_command("what about /comapct") is None  # only at the start


async def test_a_mistyped_command_asks_and_a_second_enter_sends_it(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="ok"), ScriptedReply(text="fine")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "/comapct")
        shown = screen_text(app)
        assert "Did you mean" in shown and "/compact?" in shown
        assert app.prompt_area.text == "/comapct"  # put back to be fixed
        provider = runtime._provider
        assert isinstance(provider, ScriptedProvider) and provider.requests == []
        await pilot.press("enter")  # sent again as it is: the model gets it
        await until(pilot, lambda: not app.busy and provider.requests != [], what="the turn")
        await until(pilot, lambda: "ok" in screen_text(app), what="the reply")
        await send(pilot, "/etc/hosts holds what?")  # a path is never asked about
        assert len(provider.requests) == 2
    runtime.close()


async def test_esc_in_the_resume_picker_quits(tmp_path: Path) -> None:
    """`peri -r` and Esc: the user changed their mind; no new session is made."""
    from peri_cli.tui.screens.session_picker import SessionPicker

    from .harness import user, write_session

    runtime = make_runtime(tmp_path, new_session=False)
    write_session(runtime.store, "11111111-old", [user("earlier work")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        assert "Esc quit" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.return_code is not None, what="the exit")
    assert app.return_code == 0 and runtime.session is None
    assert [s.id for s in runtime.store.list()] == ["11111111-old"]
    runtime.close()


async def test_bypass_mode_starts_with_a_warning_in_view(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, mode="bypass")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: app.ready, what="the session")
        await until(pilot, lambda: "Bypass mode" in screen_text(app), what="the warning")
        assert "without asking" in screen_text(app)
    runtime.close()
    (tmp_path / "plain").mkdir()
    runtime = make_runtime(tmp_path / "plain")
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: app.ready, what="the session")
        await pilot.pause(0.1)
        assert "Bypass mode" not in screen_text(app)
    runtime.close()


async def test_the_status_cost_after_a_resume_is_what_cost_says(tmp_path: Path) -> None:
    """A resumed session holds only its visible tail in memory (from its last /clear): the
    status bar counted that tail; /cost counts the whole record. They agree now."""
    from peri_cli.base.messages import Usage
    from peri_cli.session.costs import session_costs
    from peri_cli.session.rewind import record
    from peri_cli.session.transcript import ClearMarker
    from peri_cli.session.transcript_file import TranscriptWriter

    from .harness import assistant, user, write_session

    runtime = make_runtime(tmp_path, new_session=False)
    usage = Usage(input_tokens=10_000, output_tokens=2_000)
    sid = write_session(runtime.store, "22222222-0bd0", [user("a"), assistant("b")], usage=usage)
    writer = TranscriptWriter(runtime.store.path_of(sid))
    writer.append(ClearMarker())
    writer.close()
    runtime.start_existing(sid, fork=False)
    session = runtime.session
    assert session is not None
    whole = session_costs(record(session), session.dir, runtime.model).total.usd
    assert whole and whole > 0
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: app.ready, what="the session")
        await until(pilot, lambda: app.status.status.cost_usd == whole, what="the whole cost")
    runtime.close()


def test_the_context_bar_is_proportional() -> None:
    """Half the window in one part and four of 500 tokens: 30 and 31 of 60 cells, not 34
    (each small part was given a cell of its own)."""
    from peri_cli.tui.context import ContextPart, ContextReport
    from peri_cli.tui.screens.context_view import render_bar

    parts = [ContextPart("messages", 100_000), *(ContextPart(f"p{i}", 500) for i in range(4))]
    bar = render_bar(ContextReport(parts, 200_000, 10), 60)
    assert len(bar.plain) == 60
    assert bar.plain.count("█") == 31 and bar.plain.startswith("█" * 30)
    full = render_bar(
        ContextReport([ContextPart("a", 150_000), ContextPart("b", 50_000)], 200_000, 1)
    )
    assert full.plain == "█" * 60


async def test_the_footer_and_placeholder_show_whole_pieces_at_60_columns(tmp_path: Path) -> None:
    """At 60 columns the key footer ended in a lone "^" and the prompt's hint in a dangling
    "·": each shows only what fits whole, and all of it again when the terminal widens."""
    runtime = make_runtime(tmp_path)
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: app.ready, what="the session")
        await pilot.pause(0.2)
        lines = screen_text(app).splitlines()
        footer = lines[-1].rstrip()
        assert not footer.endswith("^") and footer.endswith("Newline")
        hint = next(line for line in lines if "Message Peri" in line)
        assert hint.split("│")[1].rstrip().endswith("@ for files")
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.3)
        shown = screen_text(app)
        assert "Ctrl+J for a new line" in shown and shown.splitlines()[-1].count("^") >= 2
    runtime.close()


def test_the_notification_channels_write_their_own_sequences() -> None:
    from peri_cli.base.settings import Settings
    from peri_cli.tui.notify import channel_of, signal_for

    plain = Settings()
    assert channel_of(plain, {"TERM_PROGRAM": "iTerm.app"}) == "iterm2"
    assert channel_of(plain, {"TERM": "xterm-kitty"}) == "kitty"
    assert channel_of(plain, {"TERM_PROGRAM": "ghostty"}) == "ghostty"
    assert channel_of(plain, {}) == "auto"
    off = Settings(notifications=False)
    assert channel_of(off, {"TERM_PROGRAM": "iTerm.app"}) == "notifications_disabled"
    chosen = Settings(preferredNotifChannel="terminal_bell", notifications=False)
    assert channel_of(chosen, {}) == "terminal_bell"  # the new key wins over the old
    assert signal_for("iterm2", "Peri waits") == (False, "\x1b]9;Peri waits\x07")
    assert signal_for("ghostty", "Peri waits") == (False, "\x1b]777;notify;Peri;Peri waits\x07")
    assert signal_for("kitty", "Peri waits")[1].startswith("\x1b]99;")
    assert signal_for("terminal_bell", "Peri waits") == (True, "")
    assert signal_for("notifications_disabled", "Peri waits") == (False, "")
    assert signal_for("iterm2", "bad\x1b]0;x") == (True, "")  # never a sequence of ours broken


async def test_an_unfocused_approval_runs_the_notification_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Notification hook gets Claude Code's input (message, notification_type) whenever
    a notification would be sent: here an approval while the terminal is unfocused."""
    import json

    from textual import events

    from peri_cli.providers.scripted import ScriptedCall
    from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

    from .test_extension_commands import builder, hook, ready, user_settings

    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    seen = tmp_path / "seen.json"
    script = tmp_path / "note.sh"
    script.write_text(f"#!/bin/sh\ncat > {seen}\n")
    script.chmod(0o755)
    user_settings(tmp_path, hooks={"Notification": hook(str(script), "permission_prompt")})
    write = ScriptedReply(tool_calls=[ScriptedCall("Write", {"file_path": "x", "content": "1"})])
    app = PeriApp(
        builder(tmp_path, replies=[write, ScriptedReply(text="ok")]), clock=lambda: FIXED_NOW
    )
    async with app.run_test(size=(60, 20)) as pilot:
        await ready(pilot)
        app.post_message(events.AppBlur())
        await pilot.pause(0.05)
        await send(pilot, "write x", wait=False)
        await until(pilot, lambda: list(app.query(PermissionPrompt)), what="the approval")
        await until(pilot, seen.exists, what="the hook")
        await until(pilot, lambda: seen.read_text().endswith("}"), what="its input")
        data = json.loads(seen.read_text())
        assert data["hook_event_name"] == "Notification"
        assert data["notification_type"] == "permission_prompt"
        assert data["message"] == "Peri is waiting for your approval"
        await pilot.press("n")
        await until(pilot, lambda: not app.busy)
    app.runtime.close()


async def test_an_edit_approval_shows_one_numbered_diff_with_three_lines_of_context(
    tmp_path: Path,
) -> None:
    from peri_cli.providers.scripted import ScriptedCall
    from peri_cli.tui.widgets.permission_prompt import PermissionPrompt
    from peri_cli.tui.widgets.tool_call import ToolCallView

    runtime = make_runtime(tmp_path)
    lines = [f"line {n}" for n in range(1, 21)]
    (runtime.workspace / "notes.txt").write_text("\n".join(lines) + "\n")
    edit = {"file_path": "notes.txt", "old_string": "line 10\n", "new_string": "line ten\n"}
    runtime._provider = ScriptedProvider(
        [ScriptedReply(tool_calls=[ScriptedCall("Edit", edit)]), ScriptedReply(text="done")]
    )
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "rename line 10", wait=False)
        await until(pilot, lambda: list(app.query(PermissionPrompt)), what="the approval")
        await pilot.pause(0.2)
        shown = screen_text(app)
        assert shown.count("line ten") == 1  # once: the card above is folded while it asks
        for number, text in ((7, " 7 │ line 7"), (13, "13 │ line 13")):
            assert text in shown, number  # three lines of context each side, numbered
        assert "line 6" not in shown and "line 14" not in shown
        assert "-10 │ line 10" in shown and "+10 │ line ten" in shown
        await pilot.press("y")
        await until(pilot, lambda: not app.busy, what="the turn")
        card = app.query_one(ToolCallView)
        assert not card.collapsed  # the edit ran: its (short) diff is shown open again
    assert (runtime.workspace / "notes.txt").read_text().count("line ten") == 1
    runtime.close()
