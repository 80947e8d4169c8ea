"""The status line under the prompt (Claude Code's `statusLine`, CONTRACT §12): a real shell
command reads the session's JSON and prints ANSI colours and escape sequences; the colours are
kept, every other sequence shows as text; it runs again after a turn; a failing or hanging
command never breaks the TUI; a project's command runs only once the workspace is trusted and is
named in the trust question. Real runtimes (`build_runtime`), real commands."""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from peri_cli.providers.scripted import ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.trust_dialog import TrustDialog
from peri_cli.tui.widgets.notice import NoticeLine
from peri_cli.tui.widgets.status_line import StatusLineView

from .harness import FIXED_NOW, screen_text, send, until
from .test_extension_commands import builder, project_settings, ready, user_settings

SIZE = (120, 40)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    return path


def status_line(command: str, **extra: Any) -> dict[str, Any]:
    return {"statusLine": {"type": "command", "command": command, **extra}}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def view(app: PeriApp) -> StatusLineView:
    return app.query_one(StatusLineView)


def shown(app: PeriApp) -> str:
    text = view(app).shown
    return text.plain if text is not None and view(app).display else ""


async def test_colours_are_kept_and_other_escapes_made_visible(ws: Path, tmp_path: Path) -> None:
    command = (
        "cat > got.json; "
        "printf '\\033[1;32mOK\\033[0m \\033]0;pwned\\007\\033[2J%s\\n2nd line\\n' \"$PWD\""
    )
    user_settings(tmp_path, **status_line(command))
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(pilot, lambda: shown(app).startswith("OK"), what="the status line")
        assert shown(app) == f"OK ␛]0;pwned␇␛[2J{ws}"
        text = view(app).shown
        assert text is not None
        (span,) = text.spans
        assert text.plain[span.start : span.end] == "OK"
        assert not isinstance(span.style, str) and span.style.bold and span.style.color
        # on screen under the prompt, the second line left out, no escape reaching the terminal
        screen = screen_text(app)
        assert f"OK ␛]0;pwned␇␛[2J{ws}" in screen and "2nd line" not in screen
        got = json.loads((ws / "got.json").read_text())
        assert got["session_id"] == app.agent.session.id
        assert got["workspace"]["project_dir"] == str(ws)
        assert got["output_style"] == {"name": "default"}
        assert got["model"]["id"] == app.agent.model
        assert got["transcript_path"] == str(app.agent.session.path)


async def test_it_runs_again_after_a_turn_and_sees_its_cost(ws: Path, tmp_path: Path) -> None:
    count = 'n=$(($(cat n 2>/dev/null || echo 0)+1)); echo $n > n; cat > last.json; echo "run $n"'
    user_settings(tmp_path, **status_line(count, padding=4))
    replies = [ScriptedReply(text="hello back")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(pilot, lambda: shown(app).startswith("run "), what="the first run")
        first = int((ws / "n").read_text())
        await send(pilot, "hi")
        await until(pilot, lambda: int((ws / "n").read_text()) > first, what="a run after it")
        await until(pilot, lambda: shown(app) == f"run {(ws / 'n').read_text().strip()}")
        assert view(app).styles.padding.left == 5  # the prompt area's cell and `padding`
        after = json.loads((ws / "last.json").read_text())
        assert after["cost"]["total_cost_usd"] > 0  # the reply's usage counted


async def test_a_failing_command_leaves_a_short_note(ws: Path, tmp_path: Path) -> None:
    user_settings(tmp_path, **status_line("echo half; exit 7"))
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(pilot, lambda: shown(app) != "", what="the note")
        assert shown(app) == "status line exited with 7" and view(app).has_class("-note")
        assert "half" not in screen_text(app)


async def test_a_hanging_command_blocks_nothing_and_ends_with_peri(
    ws: Path, tmp_path: Path
) -> None:
    user_settings(tmp_path, **status_line("echo $$ > pid; sleep 600"))
    replies = [ScriptedReply(text="still answering")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(pilot, (ws / "pid").exists, what="the command to start")
        await send(pilot, "are you there?")  # a turn runs while the command hangs
        assert "still answering" in screen_text(app)
        assert shown(app) == ""
    app.runtime.close()
    # its process group is ended with the app (the cancelled run kills it as it unwinds)
    pid = int((ws / "pid").read_text())
    deadline = time.monotonic() + 15
    while alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not alive(pid)


async def test_an_untrusted_projects_status_line_never_runs_but_is_asked_about(
    ws: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    command = f"touch {shlex.quote(str(marker))}; echo FROM-THE-REPO"
    project_settings(ws, **status_line(command))
    app = PeriApp(builder(tmp_path, replies=[ScriptedReply(text="ok")]), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, TrustDialog)
        assert f"status line command `{command}`" in dialog.body().plain
        assert "status line command `touch" in screen_text(app)
        await pilot.press("n")
        await ready(pilot)
        await send(pilot, "hi")
        assert not view(app).display
        warned = [str(n.text) for n in app.query(NoticeLine)]
        assert any("status line command" in w for w in warned), warned
    app.runtime.close()
    assert not marker.exists()
    # trusted, the same command runs
    app = PeriApp(builder(tmp_path, "--trust-workspace"), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(pilot, lambda: shown(app) == "FROM-THE-REPO", what="the trusted line")
    app.runtime.close()
    assert marker.exists()
