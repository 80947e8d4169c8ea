"""SubAgents in a real terminal: the real `peri` process in tmux against the loopback fake
Anthropic server. Open a child's pane from the agent strip, come back, stop the child from the
strip; its report wakes the parent; quitting stops (and marks) the other."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_tmux import start_peri, start_server, wait_for_bytes

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def spawn(prompt: str, description: str) -> dict[str, object]:
    return {
        "name": "Agent",
        "input": {"prompt": prompt, "description": description, "run_in_background": True},
    }


def child_states(tmp_path: Path) -> dict[str, str]:
    """Each child's last recorded status, by description."""
    states = {}
    for path in (tmp_path / "home" / "projects").glob("*/*/agents/*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line]
        description = lines[0]["agent"]["description"]
        statuses = [e["status"] for e in lines if e.get("type") == "agent_status"]
        states[description] = statuses[-1] if statuses else "?"
    return states


def test_open_a_pane_and_stop_a_child_from_the_strip(tmp_path: Path) -> None:
    items: list[dict[str, object]] = [
        {
            "when": "orchestrate",
            "tool_calls": [
                spawn("job one: scan", "scan the repo"),
                spawn("job two: test", "run it"),
            ],
        },
        {"when": "orchestrate", "text": "Two SubAgents started."},
        {"when": "orchestrate", "text": "Noted: the scan was stopped."},
        {
            "when": "job one",
            "text": "Child one is at work.",
            "tool_calls": [{"name": "Bash", "input": {"command": "sleep 60"}}],
        },
        {
            "when": "job two",
            "text": "Child two is at work.",
            "tool_calls": [{"name": "Bash", "input": {"command": "sleep 60"}}],
        },
    ]
    server = start_server(tmp_path, items)
    url = next(server)
    tmux = start_peri(tmp_path, url, "--permission-mode", "bypass", size=(120, 40))
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        tmux("send-keys", "-t", "peri", "-l", "orchestrate two jobs")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "Two SubAgents started." in s and "SubAgents: 2 running" in s)
        tmux.wait_for(lambda s: s.count("Bash: sleep 60") >= 4)  # two cards, two strip rows
        # the strip, then the first child's pane: its stream and its command
        tmux("send-keys", "-t", "peri", "C-Down")
        tmux.wait_for(lambda s: "Enter open · x stop" in s)
        tmux("send-keys", "-t", "peri", "Enter")
        screen = tmux.wait_for(lambda s: "SubAgent 1/2" in s and "Bash(sleep 60)" in s)
        assert "Child one is at work." in screen and "Message Peri" not in screen
        # closing the pane stops nothing
        tmux("send-keys", "-t", "peri", "Escape")
        tmux.wait_for(lambda s: "Message Peri" in s and "SubAgents: 2 running" in s)
        # `x` in the strip stops the selected child; its report wakes the parent
        tmux("send-keys", "-t", "peri", "C-Down")
        tmux.wait_for(lambda s: "Enter open · x stop" in s)
        tmux("send-keys", "-t", "peri", "x")
        screen = tmux.wait_for(lambda s: "Noted: the scan was stopped." in s)
        assert "SubAgents: 1 running" in screen and "interrupted" in screen
        assert child_states(tmp_path) == {"scan the repo": "interrupted", "run it": "running"}
        tmux("send-keys", "-t", "peri", "Escape")
        tmux("send-keys", "-t", "peri", "C-c")
        tmux.wait_for(lambda s: "again to quit" in s)
        tmux("send-keys", "-t", "peri", "C-c")
        wait_for_bytes(tmp_path, "Resume this session with", timeout=20)
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
    # quitting stopped the other child and marked it so
    assert child_states(tmp_path) == {"scan the repo": "interrupted", "run it": "interrupted"}
