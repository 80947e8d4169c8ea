"""The sandbox's question about a new domain in the TUI: a sandboxed command's connection shows
the ordinary approval (which domain, once / always / deny); "always" lets it through and writes
the domain to `.peri/settings.local.json`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.sandbox.probe import probe
from peri_cli.tui.app import PeriApp
from tests.sandbox.pages import PAGE

from .harness import FIXED_NOW, screen_text, send, until
from .test_extension_commands import SIZE, builder, ready, requests, user_settings

pytestmark = [
    pytest.mark.skipif(not probe().available, reason=probe().why_not),
    pytest.mark.skipif(shutil.which("socat") is None, reason="socat is not installed"),
]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    return path


async def test_the_network_question_is_shown_and_always_saves_the_domain(
    ws: Path, tmp_path: Path, page_port: int
) -> None:
    user_settings(tmp_path, sandbox={"enabled": True})
    command = f"curl -s --max-time 20 http://localhost:{page_port}/"
    replies = [
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": command})]),
        ScriptedReply(text="fetched"),
    ]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "get the page", wait=False)
        question = "Allow a sandboxed command to reach localhost?"
        await until(pilot, lambda: question in screen_text(app), what="the network question")
        screen = screen_text(app)
        assert "A sandboxed command wants to reach localhost" in screen, screen
        assert "Allow once" in screen and "Always, mine here" in screen, screen
        assert ".peri/settings.local.json" in screen, screen
        assert "Always, shared here (.peri/settings.json)" in screen, screen
        assert "Always, all my projects (user settings)" in screen, screen
        await pilot.press("p")
        await until(pilot, lambda: len(requests(app)) >= 2 and not app.busy, what="the turn")
        local = json.loads((ws / ".peri" / "settings.local.json").read_text())
        assert local["sandbox"]["network"]["allowedDomains"] == ["localhost"]
        sent = json.dumps([m.model_dump() for m in requests(app)[-1].messages], default=str)
        assert PAGE.decode().strip() in sent, sent
        # the answer stays in the conversation, as a tool's approval does
        record = "Network: localhost always allowed (saved to sandbox.network.allowedDomains"
        assert record in screen_text(app), screen_text(app)


async def _answer_the_question(app: PeriApp, pilot: Any, key: str, tmp_path: Path) -> None:
    await ready(pilot)
    await send(pilot, "get the page", wait=False)
    question = "Allow a sandboxed command to reach localhost?"
    await until(pilot, lambda: question in screen_text(app), what="the network question")
    await pilot.press(key)
    await until(pilot, lambda: len(requests(app)) >= 2 and not app.busy, what="the turn")


def _replies(page_port: int) -> list[ScriptedReply]:
    command = f"curl -s --max-time 20 http://localhost:{page_port}/"
    return [
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": command})]),
        ScriptedReply(text="fetched"),
    ]


async def test_always_can_go_to_the_shared_or_the_user_settings(
    ws: Path, tmp_path: Path, page_port: int
) -> None:
    user_settings(tmp_path, sandbox={"enabled": True})
    app = PeriApp(builder(tmp_path, replies=_replies(page_port)), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await _answer_the_question(app, pilot, "3", tmp_path)
        shared = json.loads((ws / ".peri" / "settings.json").read_text())
        assert shared["sandbox"]["network"]["allowedDomains"] == ["localhost"]
        assert not (ws / ".peri" / "settings.local.json").exists()
        assert "in .peri/settings.json)" in screen_text(app), screen_text(app)


async def test_a_denied_domain_leaves_a_line(ws: Path, tmp_path: Path, page_port: int) -> None:
    user_settings(tmp_path, sandbox={"enabled": True})
    app = PeriApp(builder(tmp_path, replies=_replies(page_port)), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await _answer_the_question(app, pilot, "n", tmp_path)
        assert "Network: localhost denied" in screen_text(app), screen_text(app)
        sent = json.dumps([m.model_dump() for m in requests(app)[-1].messages], default=str)
        assert "network access to localhost refused by the sandbox" in sent, sent


async def test_an_always_that_cannot_be_saved_is_a_notice(
    ws: Path, tmp_path: Path, page_port: int
) -> None:
    user_settings(tmp_path, sandbox={"enabled": True})
    (ws / ".peri").mkdir()
    real = tmp_path / "real.json"
    real.write_text("{}")
    (ws / ".peri" / "settings.local.json").symlink_to(real)  # edits refuse a link
    app = PeriApp(builder(tmp_path, replies=_replies(page_port)), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await _answer_the_question(app, pilot, "p", tmp_path)
        notice = "sandbox: could not save localhost to the allowed domains"
        await until(pilot, lambda: notice in screen_text(app), what="the notice")
        assert real.read_text() == "{}"
