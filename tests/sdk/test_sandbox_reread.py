"""The sandbox settings read again mid-session keep Claude Code's files (issue 39): they are
read at start, below Peri's file of their scope, and a re-read of Peri's files keeps them there."""

from __future__ import annotations

import json
from pathlib import Path

from peri_cli.agent.workspace import load_workspace
from peri_cli.sdk import sandboxreload


def test_a_reread_keeps_claude_codes_layers_below_peris(tmp_path: Path) -> None:
    ws, home, peri_home = tmp_path / "ws", tmp_path / "home", tmp_path / "home" / ".peri"
    ws.mkdir()
    claude = home / ".claude" / "settings.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"sandbox": {"filesystem": {"denyRead": ["~/.cc-secret"]}}}))
    peri_home.mkdir()
    own = peri_home / "settings.json"
    own.write_text(json.dumps({"sandbox": {"filesystem": {"denyRead": ["~/.mine"]}}}))
    loaded, _ = load_workspace(ws, peri_home, {}, home=home)
    files = sandboxreload.watched(None, ws, peri_home)
    own.write_text(json.dumps({"sandbox": {"filesystem": {"denyRead": ["~/.changed"]}}}))
    layers = sandboxreload.reread(loaded, files, ws, peri_home)
    assert [(layer.path, layer.claude_code) for layer in layers] == [(claude, True), (own, False)]
    assert layers[1].data["sandbox"]["filesystem"]["denyRead"] == ["~/.changed"]
