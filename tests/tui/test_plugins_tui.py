"""Installed plugins in the TUI (issue 39): the fixture plugins' skill, agent (with a model
alias) and MCP server, from a local marketplace, used by the model in a TUI session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from peri_cli.cli import build_parser
from peri_cli.extensions.plugins.install import add_marketplace, stage
from peri_cli.extensions.plugins.registry import set_enabled
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.sdk.runtime import build_runtime
from peri_cli.tui.app import PeriApp
from tests.mcp.helpers import TIME_SERVER

from .harness import FIXED_NOW, send, until

MARKET = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "market"


def call(tool: str, **params: object) -> ScriptedReply:
    return ScriptedReply(tool_calls=[ScriptedCall(tool, dict(params))])


async def test_a_plugins_skill_agent_and_server_in_the_tui(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "peri-home"
    shutil.copytree(MARKET, tmp_path / "market")
    add_marketplace(home, str(tmp_path / "market"), cwd=tmp_path)
    for name in ("peri-skill", "peri-agents", "peri-time"):
        stage(home, f"{name}@peri-test-market").commit()
        set_enabled(home / "settings.json", f"{name}@peri-test-market", True)
    (tmp_path / "ws").mkdir()
    monkeypatch.chdir(tmp_path / "ws")
    env = {
        "HOME": str(tmp_path),
        "PERI_HOME": str(home),
        "PATH": f"{TIME_SERVER.parent}:/usr/bin:/bin",
    }
    runtime = build_runtime(
        build_parser().parse_args(["--permission-mode", "bypass"]), env, interactive=True
    )
    provider = ScriptedProvider(
        [
            call("Skill", name="haiku-writer"),
            call("Agent", prompt="review it", description="r", subagent_type="plugin-reviewer"),
            ScriptedReply(text="no bugs"),
            call(
                "ExecuteExtraTool",
                tool_name="mcp__plugin-time__get_current_time",
                params={"timezone": "UTC"},
            ),
            ScriptedReply(text="All three used."),
        ]
    )
    runtime._provider = provider
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.ready and not app.busy, what="the session")
        await send(pilot, "use the plugins")
    runtime.close()
    requests = provider.requests
    assert "haiku-writer" in requests[0].frozen_system
    assert "PLUGIN-SKILL-BODY-MARKER" in json.dumps(requests[1].messages, default=str)
    child = requests[2]
    assert "PLUGIN-REVIEWER-MARKER" in child.dynamic_system and child.model == "claude-sonnet-5-5"
    assert "day_of_week" in str(requests[4].messages[-1])  # the plugin's server answered
