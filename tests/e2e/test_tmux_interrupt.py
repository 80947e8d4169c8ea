"""Issue 10 in a real terminal: Ctrl+C during a tool, then a new prompt: the request the model gets
says the first turn was interrupted and what ran; a resumed session sees the same note."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.test_tmux import ROOT, start_peri, start_server, wait_for_bytes

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "tmux"], capture_output=True, check=False).returncode != 0,
    reason="tmux is not installed",
)


def _requests(url: str) -> list[dict[str, object]]:
    with urllib.request.urlopen(f"{url}/_requests", timeout=10) as response:
        data = json.load(response)
    return [r["body"] for r in data if r["status"] == 200]


def _user_texts(body: dict[str, object]) -> list[str]:
    out: list[str] = []
    for message in body["messages"]:  # type: ignore[union-attr]
        if message["role"] == "user" and isinstance(message["content"], list):
            out += [b["text"] for b in message["content"] if b.get("type") == "text"]
    return out


def test_ctrl_c_then_a_new_prompt_sends_the_interruption_note(tmp_path: Path) -> None:
    items: list[dict[str, object]] = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "sleep 30"}}]},
        {"text": "Looking at the add bug now."},
        {"text": "Still aware of it."},
    ]
    server = start_server(tmp_path, items)
    url = next(server)
    tmux = start_peri(tmp_path, url, "--permission-mode", "bypass")
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        tmux("send-keys", "-t", "peri", "-l", "sleepy tool")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "sleep 30" in s)
        tmux("send-keys", "-t", "peri", "C-c")
        screen = tmux.wait_for(lambda s: "interrupted" in s.lower())
        assert "Bash" in screen
        tmux("send-keys", "-t", "peri", "-l", "fix the add bug now")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "Looking at the add bug now." in s)
        sent = _user_texts(_requests(url)[-1])
        assert sent[0] == "sleepy tool" and sent[-1] == "fix the add bug now"
        note = sent[1]
        assert "interrupted" in note and "Bash: sleep 30" in note and "not kept" in note
        tmux("send-keys", "-t", "peri", "C-c")
        tmux.wait_for(lambda s: "again to quit" in s)
        tmux("send-keys", "-t", "peri", "C-c")
        wait_for_bytes(tmp_path, "Resume this session with")
        # a resumed session (headless here) sends the same note
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))},
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "test",
            "PERI_HOME": str(tmp_path / "home"),
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
        }
        done = subprocess.run(
            [sys.executable, "-m", "peri_cli", "-c", "-p", "and now?"],
            cwd=tmp_path / "ws",
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        resumed = _user_texts(_requests(url)[-1])
        assert note in resumed and resumed[0] == "sleepy tool"
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
