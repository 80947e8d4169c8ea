"""Issue 37: a protected file a sandboxed command's git put in the workspace (a checkout's
`.mcp.json`) is held back: Peri does not read it until the user says so in the TUI. A real
runtime with the sandbox on, the scripted model running `git checkout` through Bash."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.sandbox.probe import probe
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.held_question import HeldQuestionScreen

from .harness import FIXED_NOW, screen_text, send, until
from .test_extension_commands import builder, ready

pytestmark = pytest.mark.skipif(not probe().available, reason=probe().why_not)
SIZE = (120, 36)
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "README").write_text("x")
    subprocess.run([*GIT, "add", "-A"], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-qm", "main"], cwd=path, check=True)
    subprocess.run(["git", "checkout", "-qb", "plant"], cwd=path, check=True)
    (path / ".mcp.json").write_text('{"mcpServers": {}}')
    subprocess.run([*GIT, "add", "-A"], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-qm", "plant"], cwd=path, check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True)
    home = tmp_path / "peri-home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    monkeypatch.chdir(path)
    return path


def checkout() -> list[ScriptedReply]:
    call = ScriptedCall("Bash", {"command": "git checkout -q plant"})
    return [ScriptedReply(tool_calls=[call]), ScriptedReply(text="switched")]


@pytest.mark.parametrize("load", [True, False])
async def test_a_held_back_file_is_loaded_only_when_the_user_says(
    ws: Path, tmp_path: Path, load: bool
) -> None:
    app = PeriApp(builder(tmp_path, replies=checkout()), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "switch branches", wait=False)
        await until(pilot, lambda: isinstance(app.screen, HeldQuestionScreen), what="the question")
        await pilot.pause()
        assert ".mcp.json" in screen_text(app) and "Load it" in screen_text(app)
        with pytest.raises(SafeReadError):  # held back while the question waits
            read_text(ws / ".mcp.json")
        await pilot.press("1" if load else "2")
        await until(pilot, lambda: not isinstance(app.screen, HeldQuestionScreen), what="answer")
        await ready(pilot)
        assert app.runtime.held_back() == []  # asked once
        assert (ws / ".mcp.json").exists()  # as git left it, either way
        if load:
            assert read_text(ws / ".mcp.json") == '{"mcpServers": {}}'
        else:
            with pytest.raises(SafeReadError):
                read_text(ws / ".mcp.json")
    app.runtime.close()
