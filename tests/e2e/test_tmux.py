"""The real `peri` process in a real terminal (tmux) against the loopback fake Anthropic server:
type a prompt with send-keys, read the streamed answer back with capture-pane."""

from __future__ import annotations

import contextlib
import json
import re
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


def start_server(tmp_path: Path, items: list[dict[str, object]]) -> Iterator[str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(items))
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


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[str]:
    yield from start_server(tmp_path, [{"text": ANSWER, "delay": 0.01}])


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
        pane = Path(self.socket).parent / "pane.bytes"
        raw = pane.read_bytes()[-3000:] if pane.exists() else b"(none)"
        raise AssertionError(f"timed out; the screen was:\n{text}\nbytes: {raw!r}")


def start_peri(tmp_path: Path, server: str, *args: str, size: tuple[int, int] = (110, 32)) -> Tmux:
    """`peri` in a private tmux server, in `tmp_path/ws`; the pane stays after it exits (so what
    it prints last can be read), and every byte it writes is kept in `tmp_path/pane.bytes`."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = {
        "ANTHROPIC_BASE_URL": server,
        "ANTHROPIC_API_KEY": "test",
        "PERI_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
    }
    command = " ".join(
        [*(f"{k}={v}" for k, v in env.items()), "exec", sys.executable, "-m", "peri_cli", *args]
    )
    tmux = Tmux(tmp_path / "tmux.sock")
    # a held session first, so options are set before peri writes its first byte
    tmux("new-session", "-d", "-s", "hold", "-x", str(size[0]), "-y", str(size[1]), "sleep 600")
    tmux("set-option", "-g", "remain-on-exit", "on")
    tmux("set-option", "-g", "set-clipboard", "on")  # an OSC 52 that got through would land
    tmux("set-option", "-g", "allow-rename", "on")
    tmux(
        "new-session",
        "-d",
        "-s",
        "peri",
        "-x",
        str(size[0]),
        "-y",
        str(size[1]),
        "-c",
        str(workspace),
        "env",
        "-u",
        "OPENAI_API_KEY",
        "-u",
        "OPENAI_BASE_URL",
        "sh",
        "-c",
        f"sleep 0.5; {command}",
    )
    tmux("pipe-pane", "-o", "-t", "peri", f"cat >> {tmp_path / 'pane.bytes'}")
    return tmux


def test_peri_in_tmux_answers_a_typed_prompt(tmp_path: Path, fake_server: str) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "AGENTS.md").write_text("Be brief.\n")
    tmux = start_peri(tmp_path, fake_server)
    try:
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
        # on exit, one line says how to come back
        session_id = next((tmp_path / "home" / "projects").glob("*/*.jsonl")).stem
        wait_for_bytes(tmp_path, f"Resume this session with: peri -r {session_id}")
    finally:
        tmux("kill-server")
    assert len(list((tmp_path / "home" / "projects").glob("*/*.jsonl"))) == 1
    assert "(interrupted)" not in tmux.last


def wait_for_bytes(tmp_path: Path, text: str, timeout: float = 20.0) -> None:
    """Wait until the terminal received `text`. What peri prints as it exits is read from the
    recorded bytes, not the screen: once the pane dies, tmux redraws it without that line."""
    deadline = time.monotonic() + timeout
    pane = tmp_path / "pane.bytes"
    while time.monotonic() < deadline:
        if pane.exists() and text.encode() in pane.read_bytes():
            return
        time.sleep(0.2)
    raise AssertionError(f"the terminal never received {text!r}")


def _transcripts(tmp_path: Path) -> str:
    return "".join(p.read_text() for p in (tmp_path / "home" / "projects").glob("*/*.jsonl"))


# Issue 9 item 7: one of each family of escape sequence, each with a marker behind it
HOSTILE = {
    "csi": "\x1b[2JWIPED",
    "osc52": "\x1b]52;c;UFdORUQ=\x07CLIP",
    "osc0": "\x1b]0;PWNED-TITLE\x07TITLE",
    "c1": "\x9b31mCSI1",
    "cr": "safe\rEVILCR",
}
EVIL = " ".join(HOSTILE.values())
# what must never reach the terminal: each sequence with its marker, as bytes
RAW = [v.encode() for v in HOSTILE.values()]


def test_untrusted_bytes_never_reach_the_terminal(tmp_path: Path) -> None:
    """Model text, reasoning, a tool's output, a tool's name and a provider's error message, all
    hostile: the bytes the terminal receives hold none of the sequences, the screen shows them
    in visible forms, the title and the clipboard are untouched."""
    printf = (
        "printf '"
        + EVIL.replace("\x1b", "\\033")
        .replace("\x07", "\\007")
        .replace("\x9b", "\\302\\233")
        .replace("\r", "\\r")
        + "\\n'"
    )
    items: list[dict[str, object]] = [
        {
            "thinking": f"think {EVIL}",
            "signature": "s",
            "text": f"Model says {EVIL}",
            "tool_calls": [
                {"name": "Bash", "input": {"command": printf}},
                {"name": f"Nope{HOSTILE['osc0']}", "input": {}},
            ],
        },
        {"text": "done with tools"},
        {"status": 400, "message": f"provider says {EVIL}"},
    ]
    server = start_server(tmp_path, items)
    url = next(server)
    tmux = start_peri(tmp_path, url, "--permission-mode", "bypass", size=(160, 60))
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        tmux("send-keys", "-t", "peri", "-l", "go")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "done with tools" in s)
        tmux("send-keys", "-t", "peri", "C-o")  # every fold open: the reasoning, the output
        # (drawn, though it may scroll off the top as the folds below open: longer tool lists)
        wait_for_bytes(tmp_path, "think")
        tmux("send-keys", "-t", "peri", "-l", "again")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "provider says" in s)
        screen = tmux("capture-pane", "-p", "-e", "-t", "peri")
        title = tmux("display-message", "-p", "-t", "peri", "#{pane_title}")
        buffers = tmux("list-buffers")
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
    sent = (tmp_path / "pane.bytes").read_bytes()
    assert b"Model says" in sent and b"provider says" in sent  # the recording works
    for raw in RAW:
        assert raw not in sent, raw
    assert b"\x1b]52" not in sent and b"\xc2\x9b" not in sent
    assert "PWNED" not in title and buffers == ""
    # what is on screen: the visible forms, and no escape but Textual's own colours (SGR)
    for shown in ("␛[2JWIPED", "␛]52;c;UFdORUQ=␇CLIP", "␛]0;PWNED-TITLE␇TITLE", "<U+009B>31mCSI1"):
        assert shown in screen, shown
    assert "safe␍EVILCR" in screen
    assert not re.search(r"\x1b(?!\[[0-9;:]*m)", screen), "a non-SGR escape is on screen"
