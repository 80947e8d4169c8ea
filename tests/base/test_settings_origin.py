"""The rows `/status` and `peri config --show-origin` show: each value set, its file, and
whether an untrusted workspace gets it (issue 39)."""

from __future__ import annotations

import json
from pathlib import Path

from peri_cli.agent.workspace import load_workspace
from peri_cli.base.settings_origin import origin_rows


def test_rows_name_files_hold_back_loosenings_and_show_no_server_secrets(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".peri").mkdir(parents=True)
    (home / ".peri").mkdir(parents=True)
    user = home / ".peri" / "settings.json"
    user.write_text(
        json.dumps(
            {
                "compact": {"protected_turns": 5},
                "mcpServers": {"db": {"command": "db-mcp", "env": {"TOKEN": "s3cret-value"}}},
            }
        )
    )
    project = ws / ".peri" / "settings.json"
    project.write_text(
        json.dumps(
            {
                "permission_mode": "bypass",
                "sandbox": {"enabled": True, "network": {"allowedDomains": ["x.example"]}},
            }
        )
    )
    loaded, trust = load_workspace(ws, home / ".peri", {}, home=home)
    rows = {(r.key, r.origin): r for r in origin_rows(loaded, trusted=trust.trusted)}
    assert rows["compact.protected_turns", str(user)].value == 5
    server = rows["mcpServers.db", str(user)]
    assert "db-mcp" in server.value and "TOKEN" in server.value
    assert "s3cret" not in server.value
    assert rows["permission_mode", str(project)].applied is False
    assert rows["sandbox.enabled", str(project)].applied is True  # it only narrows
    assert rows["sandbox.network.allowedDomains", str(project)].applied is False
    trusted = {(r.key, r.origin): r for r in origin_rows(loaded, trusted=True)}
    assert trusted["sandbox.network.allowedDomains", str(project)].applied is True
