"""Issue 39 in a real terminal: an async rewake hook's output wakes the idle TUI's agent, and
its summary is shown (the real `peri` in tmux against the loopback fake server)."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_tmux import start_peri, start_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_a_rewake_hook_wakes_the_idle_agent_in_the_tui(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    review = tmp_path / "review.sh"
    # it ends only once the model's second call ran, so the turn was over or nearly
    review.write_text(
        "#!/bin/sh\nwhile [ ! -f go ]; do sleep 0.05; done\necho 'FINDING-7: token in x.py' >&2\n"
        "exit 2\n"
    )
    review.chmod(0o755)
    hook = {
        "type": "command",
        "command": str(review),
        "if": "Bash(echo:*)",
        "timeout": 60,
        "asyncRewake": True,
        "rewakeMessage": "Background review:",
        "rewakeSummary": "Review found issues",
    }
    settings = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (home / "settings.json").write_text(json.dumps(settings))
    items: list[dict[str, object]] = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo committed"}}]},
        {"tool_calls": [{"name": "Bash", "input": {"command": "touch go"}}]},
        {"text": "Committed."},
        {"text": "Fixed FINDING-7 as the review asked."},
    ]
    server = start_server(tmp_path, items)
    url = next(server)
    tmux = start_peri(tmp_path, url, "--permission-mode", "bypass", size=(120, 40))
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        tmux("send-keys", "-t", "peri", "-l", "commit it")
        tmux("send-keys", "-t", "peri", "Enter")
        screen = tmux.wait_for(lambda s: "Fixed FINDING-7 as the review asked." in s, timeout=60)
        assert "Committed." in screen and "Review found issues" in screen
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
