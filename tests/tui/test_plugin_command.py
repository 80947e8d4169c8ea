"""/plugin in the TUI (issue 39): browse a marketplace, install a plugin after a question that
shows what it brings (Enter alone says no), disable it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from peri_cli.extensions.plugins.install import add_marketplace
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
        await pilot.press("enter")  # Enter alone: no
        await until(pilot, lambda: not isinstance(app.screen, PluginQuestionScreen))
        await until(pilot, lambda: "not installed." in screen_text(app), what="refusal")
        assert not root.exists()
        await send(pilot, f"/plugin install {KEY}", wait=False)
        await until(pilot, lambda: isinstance(app.screen, PluginQuestionScreen), what="question")
        await pilot.press("y")
        await until(pilot, lambda: root.is_dir(), what="the install")
        await until(pilot, lambda: not app.busy, what="the command")
        settings = json.loads((runtime.peri_home / "settings.json").read_text())
        assert settings["enabledPlugins"] == {KEY: True}
        await send(pilot, f"/plugin disable {KEY}")
        settings = json.loads((runtime.peri_home / "settings.json").read_text())
        assert settings["enabledPlugins"] == {KEY: False}
        await send(pilot, "/plugin frobnicate")
        assert "Usage: /plugin" in screen_text(app)
    runtime.close()
