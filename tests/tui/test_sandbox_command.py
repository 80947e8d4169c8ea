"""/sandbox: state, dependencies, resolved paths, and the two switches saved locally."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.sandbox.probe import probe
from peri_cli.tui.app import PeriApp

from .harness import FIXED_NOW, screen_text, send, until
from .test_extension_commands import SIZE, builder, ready, rows, user_settings

pytestmark = pytest.mark.skipif(not probe().available, reason=probe().why_not)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    return path


async def test_sandbox_shows_and_switches(ws: Path, tmp_path: Path) -> None:
    user_settings(tmp_path, sandbox={"enabled": True, "network": {"allowedDomains": ["pypi.org"]}})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/sandbox")
        await until(pilot, lambda: any("Hidden:" in r for r in rows(app)), what="the status")
        text = "\n".join(rows(app))
        assert "Sandbox: on" in text and "bubblewrap works" in text
        assert f"Writable: {ws}" in text and ".ssh" in text and "pypi.org" in text
        await send(pilot, "/sandbox auto off")
        local = ws / ".peri" / "settings.local.json"
        await until(pilot, local.exists, what="the local settings")
        assert json.loads(local.read_text())["sandbox"] == {"autoAllowBashIfSandboxed": False}
        assert app.runtime.agent is not None
        assert app.runtime.agent.policy.sandbox.auto_allow is False
        await send(pilot, "/sandbox fallback maybe")
        await until(pilot, lambda: any("Usage: /sandbox" in r for r in rows(app)), what="usage")


async def test_a_switch_applies_to_the_next_command(ws: Path, tmp_path: Path) -> None:
    """`/sandbox auto off` mid-session: the next sandboxed command asks, with no restart."""
    user_settings(tmp_path, sandbox={"enabled": True})
    replies = [
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "echo one > one.txt"})]),
        ScriptedReply(text="first"),
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "echo two > two.txt"})]),
        ScriptedReply(text="second"),
    ]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "first")
        assert (ws / "one.txt").exists()  # auto-allowed in the sandbox: nothing asked
        await send(pilot, "/sandbox auto off")
        await send(pilot, "second", wait=False)
        await until(pilot, lambda: "Allow Bash?" in screen_text(app), what="the question")
        await pilot.press("n")
        await until(pilot, lambda: not app.busy, what="the turn")
        assert not (ws / "two.txt").exists()
