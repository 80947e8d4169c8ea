"""Issue 39 in a real terminal: plugins installed with `peri plugin` from a local git marketplace
(the fixture plugins) work in the TUI: a plugin's command runs its `!` line under its
`allowed-tools`, its SessionStart hook adds context, and its Python guard blocks `rm -rf` with
its own message."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_plugins_e2e import MARKET, NAME, git
from tests.e2e.test_tmux import ROOT, start_peri, start_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def peri_plugin(tmp_path: Path, *args: str) -> None:
    env = {**os.environ, "PERI_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "peri_cli", "plugin", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def bodies(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/_requests", timeout=10) as response:
        found: list[dict[str, Any]] = json.load(response)
    return [r["body"] for r in found if r["path"].startswith("/v1/messages") and r["status"] == 200]


def test_installed_plugins_work_in_the_tui(tmp_path: Path) -> None:
    repo = tmp_path / "market"
    shutil.copytree(MARKET, repo)
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "plugins", cwd=repo)
    peri_plugin(tmp_path, "marketplace", "add", repo.as_uri())
    for name in ("peri-commands", "peri-context", "peri-guard"):
        peri_plugin(tmp_path, "install", f"{name}@{NAME}", "--yes")
    (tmp_path / "ws").mkdir()
    items: list[dict[str, Any]] = [
        {"text": "Stamped it."},
        {"tool_calls": [{"name": "Bash", "input": {"command": "rm -rf build"}}]},
        {"text": "I will not."},
    ]
    server = start_server(tmp_path, items)
    url = next(server)
    tmux = start_peri(tmp_path, url, size=(120, 40))
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        tmux("send-keys", "-t", "peri", "-l", "/stamp hello")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "Stamped it." in s)
        assert (tmp_path / "ws" / "stamped-by-plugin").exists()  # allowed-tools: no question
        tmux("send-keys", "-t", "peri", "-l", "clean up")
        tmux("send-keys", "-t", "peri", "Enter")
        screen = tmux.wait_for(lambda s: "I will not." in s)
        assert "PLUGIN-GUARD" in screen  # the hook's message, shown
        sent = bodies(url)
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
    first = json.dumps(sent[0]["messages"])
    assert "PLUGIN-COMMAND-MARKER" in first and "Note: hello" in first
    assert "PLUGIN-CONTEXT-MARKER" in first  # the SessionStart hook's context
    assert "PLUGIN-GUARD: rm -rf is not allowed here" in json.dumps(sent[2]["messages"])
