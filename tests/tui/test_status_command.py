"""`/status`: the model, mode and trust of this session, and the settings files it read (Peri's
and Claude Code's) with the file each value came from (issue 39)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from peri_cli.agent.workspace import load_workspace
from peri_cli.tui.app import PeriApp

from .harness import FIXED_NOW, make_runtime, send, until


async def test_status_names_the_file_of_each_value(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, new_session=False)
    claude = tmp_path / ".claude" / "settings.json"  # the harness's HOME is tmp_path
    claude.parent.mkdir()
    claude.write_text(json.dumps({"permissions": {"deny": ["Bash(curl:*)"]}, "env": {"A": "1"}}))
    project = runtime.workspace / ".claude" / "settings.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}, "x": "[red]y"}))
    runtime.loaded, runtime.trust = load_workspace(
        runtime.workspace, runtime.peri_home, runtime.env, home=tmp_path
    )
    runtime.start_new()
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(160, 40)) as pilot:
        await send(pilot, "/status")
        await until(pilot, lambda: app.query(".help"), what="the status")
        text = str(app.query_one(".help", Static).content)
        assert "Permission mode: default" in text
        assert "(not trusted)" in text
        assert f"user     {claude}  (Claude Code)" in text
        assert f"project  {project}  (Claude Code)" in text
        assert f'permissions.deny = ["Bash(curl:*)"]  ({claude})' in text
        assert f'permissions.allow = ["Bash(ls:*)"]  ({project}; not applied' in text
    runtime.close()
