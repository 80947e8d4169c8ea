"""`/meta`: the session's frozen Meta Harness state beside what the settings say now."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table
from textual.widgets import Static

from peri_cli.base.settings import load_settings
from peri_cli.tui.app import PeriApp

from .harness import FIXED_NOW, make_runtime, send, until
from .test_turns import notices


def _write(workspace: Path, meta: dict[str, object]) -> None:
    (workspace / ".peri").mkdir(exist_ok=True)
    (workspace / ".peri" / "settings.json").write_text(json.dumps({"meta_harness": meta}))


async def test_meta_lists_the_frozen_state_and_the_current_settings(tmp_path: Path) -> None:
    odd = tmp_path / "[bold red]x"  # a folder name that would be markup
    odd.mkdir()
    runtime = make_runtime(odd, new_session=False)
    workspace = runtime.workspace
    _write(workspace, {"shell": False})
    runtime.loaded = load_settings(workspace, runtime.peri_home, {})
    runtime.settings = runtime.loaded.settings
    runtime.start_new()  # the session freezes `shell` off
    assert "Bash" not in runtime.agent.tools.direct
    _write(workspace, {"shell": True, "git": False, "Shel": False})
    runtime.loaded = load_settings(workspace, runtime.peri_home, {})
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "/meta")
        await until(pilot, lambda: app.query(".help"), what="the table")
        table = app.query_one(".help", Static).content
        assert isinstance(table, Table)
        rows = list(zip(*(list(map(str, c.cells)) for c in table.columns), strict=True))
        by_name = {row[0].split(" ")[0]: row for row in rows}
        settings_file = workspace / ".peri" / "settings.json"
        assert by_name["shell"] == ("shell (Bash)", "off", f"on ({settings_file})")
        assert by_name["git"] == ("git", "on", f"off ({settings_file})")
        assert by_name["identity"] == ("identity", "built-in", "built-in")
        assert by_name["BuiltInSubagents"][1:] == ("on", "on")
        assert "[bold red]x" in by_name["shell"][2]  # file text is shown, never markup
        assert "did you mean 'shell'" in notices(app)
        assert "apply to new sessions" in notices(app)
    runtime.close()
