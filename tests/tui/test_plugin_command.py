"""/plugin in the TUI (issue 39): browse a marketplace, install a plugin after a question that
shows what it brings (Enter alone says no), disable it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from peri_cli.cli import build_parser
from peri_cli.extensions.plugins.install import add_marketplace
from peri_cli.providers.scripted import ScriptedProvider
from peri_cli.sdk.runtime import Runtime, build_runtime
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.plugin_question import PluginQuestionScreen

from .harness import FIXED_NOW, make_runtime, screen_text, send, until

MARKET = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "market"
KEY = "peri-time@peri-test-market"


async def test_browse_install_and_disable(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    shutil.copytree(MARKET, tmp_path / "market")
    add_marketplace(runtime.peri_home, str(tmp_path / "market"), cwd=tmp_path)
    root = runtime.peri_home / "plugins" / "peri-test-market" / "peri-time"
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await send(pilot, "/plugin")
        assert "not installed" in screen_text(app)
        await send(pilot, f"/plugin install {KEY}", wait=False)
        await until(pilot, lambda: isinstance(app.screen, PluginQuestionScreen), what="question")
        shown = screen_text(app)
        assert "Install a plugin?" in shown and "mcpServers" in shown
        assert "Esc: nothing is" in shown and "asked again" not in shown  # wraps at 60
        await pilot.press("enter")  # Enter alone: no
        await until(pilot, lambda: not isinstance(app.screen, PluginQuestionScreen))
        await until(pilot, lambda: "not installed." in screen_text(app), what="refusal")
        assert not root.exists()
        await send(pilot, f"/plugin install {KEY}", wait=False)
        await until(pilot, lambda: isinstance(app.screen, PluginQuestionScreen), what="question")
        await pilot.press("y")
        await until(pilot, root.is_dir, what="the install")
        await until(pilot, lambda: not app.busy, what="the command")
        settings = json.loads((runtime.peri_home / "settings.json").read_text())
        assert settings["enabledPlugins"] == {KEY: True}
        await send(pilot, "/plugin")
        assert f"{KEY}  enabled" in screen_text(app).replace("\n", "")  # as it is now
        await send(pilot, f"/plugin disable {KEY}")
        settings = json.loads((runtime.peri_home / "settings.json").read_text())
        assert settings["enabledPlugins"] == {KEY: False}
        await send(pilot, "/plugin frobnicate")
        assert "Usage: /plugin" in screen_text(app)
    runtime.close()


async def test_a_trusted_project_offers_its_plugin_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    (ws / ".peri").mkdir(parents=True)
    monkeypatch.chdir(ws)  # `peri` runs in the workspace
    shutil.copytree(MARKET, tmp_path / "market")
    suggested = {"peri-test-market": {"source": {"source": "directory", "path": "../market"}}}
    settings = {"enabledPlugins": {KEY: True}, "extraKnownMarketplaces": suggested}
    (ws / ".peri" / "settings.json").write_text(json.dumps(settings))
    home = tmp_path / "peri-home"
    env = {"HOME": str(tmp_path), "PERI_HOME": str(home)}

    def build() -> Runtime:
        args = build_parser().parse_args(["--trust-workspace"])
        runtime = build_runtime(args, env, interactive=True)
        runtime._provider = ScriptedProvider([])
        return runtime

    app = PeriApp(build, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "enable it" in screen_text(app), what="the offer")
        assert isinstance(app.screen, PluginQuestionScreen) and "plugin-time" in screen_text(app)
        assert "asked again next time" in screen_text(app)  # Esc here: offered at the next start
        await pilot.press("2")  # no: remembered
        await until(pilot, lambda: not isinstance(app.screen, PluginQuestionScreen))
    app.runtime.close()
    assert not (home / "plugins" / "peri-test-market" / "peri-time").exists()
    assert "peri-test-market" in (home / "plugins" / "known_marketplaces.json").read_text()
    app = PeriApp(build, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.ready and not app.busy, what="the session")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, PluginQuestionScreen)  # asked once
    app.runtime.close()
