"""Issue 11: a project MCP server added to `.mcp.json` after the workspace was trusted is asked
about once in the TUI before it starts, and the answer is remembered (a changed entry is a new
server). Real runtimes, a real stdio MCP server, the trust file on disk."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from peri_cli.agent.host import ServerQuestion
from peri_cli.permissions.truststore import TRUST_FILE, TrustRecord, TrustStore
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.server_question import ServerQuestionScreen, question_text
from peri_cli.tui.screens.trust_dialog import TrustDialog
from peri_cli.tui.widgets.notice import NoticeLine
from tests.mcp.helpers import SERVERS

from .harness import FIXED_NOW, screen_text, until
from .test_extension_commands import builder, ready

SIZE = (120, 36)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


def crash(*extra: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "crash_server.py"), *extra]}


def mcp_json(ws: Path, servers: dict[str, Any]) -> None:
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def record(tmp_path: Path) -> dict[str, Any]:
    data = json.loads((tmp_path / "peri-home" / TRUST_FILE).read_text())
    (entry,) = data["workspaces"].values()
    return entry


async def asked(pilot: Any, app: PeriApp) -> None:
    await until(pilot, lambda: isinstance(app.screen, ServerQuestionScreen), what="the question")
    await pilot.pause()


def states(app: PeriApp) -> dict[str, str]:
    out = {}
    for line in app.runtime.mcp_statuses():
        name, rest = line.split(" (", 1)
        out[name] = rest.split(": ", 1)[1].split(" —")[0]
    return out


async def test_trusting_approves_the_listed_servers_and_a_new_one_is_asked_once(
    ws: Path, tmp_path: Path
) -> None:
    mcp_json(ws, {"first": crash()})
    # 1. the trust dialog lists `first`; trusting it starts it and approves it
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        await pilot.press("y")
        await ready(pilot)
        await until(pilot, lambda: states(app).get("first") == "connected", what="first")
        assert not isinstance(app.screen, ServerQuestionScreen)
    app.runtime.close()
    assert record(tmp_path)["trusted"] is True and len(record(tmp_path)["servers"]) == 1

    # 2. a server added since: asked once, before it starts; Start remembers it
    mcp_json(ws, {"first": crash(), "second": crash("--x")})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        screen = screen_text(app)
        assert "Start a new MCP server from this project?" in screen
        assert "second  (from .mcp.json)" in screen and "crash_server.py --x" in screen
        assert states(app)["second"] == "skipped"  # not started while asking
        await pilot.press("y")
        await until(pilot, lambda: states(app).get("second") == "connected", what="second")
        assert states(app)["first"] == "connected"
    app.runtime.close()
    assert len(record(tmp_path)["servers"]) == 2

    # 3. asked once: the next run starts both without a question; a third is refused
    mcp_json(ws, {"first": crash(), "second": crash("--x"), "third": crash("--y")})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        assert "third" in screen_text(app) and "second  (from" not in screen_text(app)
        await pilot.press("n")
        await ready(pilot)
        await until(pilot, lambda: states(app).get("second") == "connected", what="second")
        assert states(app)["third"] == "skipped"
    app.runtime.close()
    assert len(record(tmp_path)["refused_servers"]) == 1

    # 4. the refusal is remembered too: no question, a warning that says why
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert not isinstance(app.screen, ServerQuestionScreen)
        (line,) = [n.text for n in app.query(NoticeLine) if "'third'" in n.text]
        assert line.startswith("MCP server 'third' from") and "you said not to start it" in line
    app.runtime.close()


async def test_esc_leaves_the_server_off_and_asks_again_next_time(ws: Path, tmp_path: Path) -> None:
    TrustStore(tmp_path / "peri-home").record(ws, TrustRecord(True))
    mcp_json(ws, {"later": crash()})
    for _ in range(2):
        app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
        async with app.run_test(size=SIZE) as pilot:
            await asked(pilot, app)
            await pilot.press("escape")
            await ready(pilot)
            assert states(app)["later"] == "skipped"
        app.runtime.close()
    assert record(tmp_path).get("servers", []) == []


async def test_the_question_shows_env_cwd_and_headers_as_written(ws: Path, tmp_path: Path) -> None:
    TrustStore(tmp_path / "peri-home").record(ws, TrustRecord(True))
    node = {"command": "node", "args": ["server.js"], "cwd": "tools"}
    node["env"] = {"NODE_OPTIONS": "--require ./x.js"}  # type: ignore[assignment]
    key = {"Authorization": "Bearer ${ANTHROPIC_API_KEY}"}
    mcp_json(ws, {"node": node, "web": {"url": "https://mcp.example.com/mcp", "headers": key}})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        screen = screen_text(app)
        assert "runs: node server.js" in screen and "cwd: tools" in screen
        assert 'env: NODE_OPTIONS="--require ./x.js"' in screen
        await pilot.press("n")
        await until(pilot, lambda: "web  (from" in screen_text(app), what="the second question")
        screen = screen_text(app)
        assert "connects to: https://mcp.example.com/mcp (http)" in screen
        assert 'header: Authorization="Bearer ${ANTHROPIC_API_KEY}"' in screen
        await pilot.press("n")
        await ready(pilot)
        (line,) = [n.text for n in app.query(NoticeLine) if "'web'" in n.text]
        assert "${ANTHROPIC_API_KEY} left empty" in line  # the key is never sent there
    app.runtime.close()


async def test_a_long_entry_scrolls_and_the_choices_stay_on_screen_at_60x20(
    ws: Path, tmp_path: Path
) -> None:
    TrustStore(tmp_path / "peri-home").record(ws, TrustRecord(True))
    mcp_json(ws, {"big": {**crash(), "env": {f"V{i}": f"value-{i}" for i in range(40)}}})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await asked(pilot, app)
        screen = screen_text(app)
        assert "Start a new MCP server from this project?" in screen
        assert "1. Start it" in screen and "2. Don't start it" in screen
        assert "Esc decides later" in screen
        assert "PgUp/PgDn" in screen and "more below" in screen
        assert "value-39" not in screen
        await pilot.press("pagedown")
        await pilot.pause()
        assert "more above and below" in screen_text(app)
        await pilot.press("end")
        await pilot.pause()
        assert "value-39" in screen_text(app) and "2. Don't start it" in screen_text(app)
        assert "more above" in screen_text(app)
        await pilot.press("escape")
        await ready(pilot)
    app.runtime.close()


async def test_enter_alone_does_not_start_the_server(ws: Path, tmp_path: Path) -> None:
    """The question opens right after the session attaches, maybe while the user is typing their
    first message: an Enter meant for the prompt must not start a server (and be remembered)."""
    TrustStore(tmp_path / "peri-home").record(ws, TrustRecord(True))
    mcp_json(ws, {"later": crash()})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await asked(pilot, app)
        assert "› 2. Don't start it" in screen_text(app)
        await pilot.press("enter")
        await ready(pilot)
        assert not isinstance(app.screen, ServerQuestionScreen)
        assert states(app)["later"] == "skipped"
    app.runtime.close()
    answer = record(tmp_path)
    assert answer.get("servers", []) == [] and len(answer["refused_servers"]) == 1


def test_the_question_shows_repository_text_visibly() -> None:
    what = (("runs", "rm -rf / \x1b]52;c;eA==\x07"),)
    question = ServerQuestion("[b]evil\x1b[2J", what, ".mcp.json")
    text = question_text(question).plain
    assert "[b]evil␛[2J" in text and "␛]52;c;eA==␇" in text and "\x1b" not in text
