"""Issue 40 item 6 in the TUI: a hook's `"continue": false` ends the turn and the screen shows
its `stopReason`; the next prompt runs (real hook scripts, the scripted provider)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.widgets.notice import NoticeLine

from .harness import FIXED_NOW, screen_text, send, until
from .test_extension_commands import builder, hook, ready, user_settings

STOP = '{"continue": false, "stopReason": "the [b]build[/b] is frozen"}'


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    return path


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse"])
async def test_a_tool_hooks_stop_ends_the_turn_with_its_reason_shown(
    ws: Path, tmp_path: Path, event: str
) -> None:
    script = tmp_path / "stop.sh"
    script.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{STOP}'\n")
    script.chmod(0o755)
    user_settings(tmp_path, hooks={event: hook(str(script), "Bash")})
    touch = ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "touch made.txt"})])
    replies = [touch, ScriptedReply(text="never sent"), ScriptedReply(text="Next one.")]
    app = PeriApp(
        builder(tmp_path, "--permission-mode", "bypass", replies=replies),
        clock=lambda: FIXED_NOW,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await send(pilot, "make it")
        await until(pilot, lambda: not app.busy)
        notices = [n.text for n in app.query(NoticeLine)]
        assert any(n.startswith("Stopped: the [b]build[/b] is frozen") for n in notices), notices
        assert "the [b]build[/b] is frozen" in screen_text(app)  # as written, never markup
        assert "never sent" not in screen_text(app)
        provider = app.runtime._provider
        assert isinstance(provider, ScriptedProvider) and len(provider.requests) == 1
        assert (ws / "made.txt").exists() == (event == "PostToolUse")
        await send(pilot, "and now?")
        await until(pilot, lambda: not app.busy)
        assert len(provider.requests) == 2
    app.runtime.close()


async def test_a_user_prompt_submit_stop_sends_nothing_and_says_why(
    ws: Path, tmp_path: Path
) -> None:
    body = json.dumps({"continue": False, "stopReason": "prompts are paused for the release"})
    script = tmp_path / "stop.sh"
    script.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{body}'\n")
    script.chmod(0o755)
    user_settings(tmp_path, hooks={"UserPromptSubmit": hook(str(script))})
    app = PeriApp(builder(tmp_path, replies=[ScriptedReply(text="never")]), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, lambda: not app.busy)
        assert "Stopped: prompts are paused for the release" in screen_text(app)
        provider = app.runtime._provider
        assert isinstance(provider, ScriptedProvider) and provider.requests == []
    app.runtime.close()
