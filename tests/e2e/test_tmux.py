"""The real `peri` process in a real terminal (tmux) against the loopback fake Anthropic server:
type a prompt with send-keys, read the streamed answer back with capture-pane."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "The fake server says hello from the loopback."


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": ANSWER, "delay": 0.01}]))
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests" / "fakeserver.py"),
            "--port",
            "0",
            "--script",
            str(script),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("LISTENING"), line
        yield f"http://127.0.0.1:{line.split()[1]}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Tmux:
    """A private tmux server (its own socket), so the test never touches the user's sessions."""

    def __init__(self, socket: Path) -> None:
        self.socket = str(socket)
        self.last = ""  # the last non-empty screen seen

    def __call__(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-f", "/dev/null", "-S", self.socket, *args],
            check=False,  # capture-pane after peri quit fails; the caller judges the output
            capture_output=True,
            text=True,
            timeout=20,
        )
        return out.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "peri")

    def wait_for(self, check: Callable[[str], bool], timeout: float = 45.0) -> str:
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if text:
                self.last = text
            if check(text):
                return text
            time.sleep(0.2)
        raise AssertionError(f"timed out; the screen was:\n{text}")


def test_peri_in_tmux_answers_a_typed_prompt(tmp_path: Path, fake_server: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Be brief.\n")
    env = {
        "ANTHROPIC_BASE_URL": fake_server,
        "ANTHROPIC_API_KEY": "test",
        "PERI_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
    }
    command = " ".join(
        [*(f"{k}={v}" for k, v in env.items()), "exec", sys.executable, "-m", "peri_cli"]
    )
    tmux = Tmux(tmp_path / "tmux.sock")
    try:
        tmux(
            "new-session",
            "-d",
            "-s",
            "peri",
            "-x",
            "110",
            "-y",
            "32",
            "-c",
            str(workspace),
            "env",
            "-u",
            "OPENAI_API_KEY",
            "-u",
            "OPENAI_BASE_URL",
            "sh",
            "-c",
            command,
        )
        tmux.wait_for(lambda s: "Message Peri" in s)
        screen = tmux.screen()
        assert "Project guide: AGENTS.md" in screen
        tmux("send-keys", "-t", "peri", "-l", "say hello")
        tmux.wait_for(lambda s: "say hello" in s)
        tmux("send-keys", "-t", "peri", "Enter")
        screen = tmux.wait_for(lambda s: ANSWER in s)
        assert "say hello" in screen
        # the turn is over once the reply is in the transcript and the status shows its usage
        tmux.wait_for(lambda s: "cache" in s and ANSWER in _transcripts(tmp_path))
        assert "anthropic" in tmux.screen()
        tmux("send-keys", "-t", "peri", "C-c")
        tmux.wait_for(lambda s: "again to quit" in s)
        tmux("send-keys", "-t", "peri", "C-c")
        tmux.wait_for(lambda s: "Message Peri" not in s, timeout=20)
    finally:
        tmux("kill-server")
    assert len(list((tmp_path / "home" / "projects").glob("*/*.jsonl"))) == 1
    assert "(interrupted)" not in tmux.last


def _transcripts(tmp_path: Path) -> str:
    return "".join(p.read_text() for p in (tmp_path / "home" / "projects").glob("*/*.jsonl"))
