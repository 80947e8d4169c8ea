"""Issue 15 in a real terminal: the real `peri` process in tmux against the loopback fake server.
`!ls`, an `@file` attachment, Shift+Tab, and /rewind to before prompt 3 of 4 (the edited file is
restored, the next request and a resumed session hold prompts 1-2 and the new one, not 3-4)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_tmux import ROOT, Tmux, start_peri, start_server

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "tmux"], capture_output=True, check=False).returncode != 0,
    reason="tmux is not installed",
)


def _requests(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/_requests", timeout=10) as response:
        found: list[dict[str, Any]] = json.load(response)
    return [r for r in found if r["path"].startswith("/v1/messages") and r["status"] == 200]


def _texts(body: dict[str, Any]) -> str:
    """Every text in a Messages request's history, tool results included."""
    out: list[str] = []

    def walk(block: Any) -> None:
        if isinstance(block, str):
            out.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            content = block.get("content")
            if isinstance(content, list | str):
                walk(content)
        elif isinstance(block, list):
            for item in block:
                walk(item)

    for message in body["messages"]:
        walk(message["content"])
    return "\n".join(out)


@contextlib.contextmanager
def _peri(tmp_path: Path, items: list[dict[str, Any]], *args: str) -> Iterator[tuple[Tmux, str]]:
    server = start_server(tmp_path, items)
    url = next(server)
    tmux = start_peri(tmp_path, url, *args)
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        yield tmux, url
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)


def _type(tmux: Tmux, text: str) -> None:
    tmux("send-keys", "-t", "peri", "-l", text)
    tmux.wait_for(lambda s: text[-20:] in s)
    tmux("send-keys", "-t", "peri", "Enter")


def test_bang_ls_at_file_and_shift_tab(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "zebra-file.txt").write_text("the zebra file says hi\n")
    items = [{"text": "seen the listing"}, {"text": "seen the file"}]
    with _peri(tmp_path, items) as (tmux, url):
        _type(tmux, "!ls")
        tmux.wait_for(lambda s: "zebra-file.txt" in s and "Bash" in s)
        _type(tmux, "what is in @zebra-file.txt")
        tmux.wait_for(lambda s: "seen the listing" in s)
        tmux.wait_for(lambda s: "Attached @zebra-file.txt" in s)
        _type(tmux, "and now")
        tmux.wait_for(lambda s: "seen the file" in s)
        status = tmux.wait_for(lambda s: "· default ·" in s)
        assert "accept-edits" not in status.splitlines()[-2]
        for mode in ("accept-edits", "plan", "default"):
            tmux("send-keys", "-t", "peri", "BTab")
            tmux.wait_for(lambda s, m=mode: f"· {m} ·" in s)
        requests = _requests(url)
    first = _texts(requests[0]["body"])
    assert "$ ls" in first and "zebra-file.txt" in first  # the model saw the command's output
    assert "     1\tthe zebra file says hi" in first  # the attachment, as Read gives it
    assert "what is in @zebra-file.txt" in first


def test_rewind_restores_the_file_hides_later_prompts_and_resume_agrees(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    edit = {"file_path": "a.txt", "old_string": "from beta", "new_string": "from gamma"}
    items: list[dict[str, Any]] = [
        {"text": "reply one"},
        {
            "tool_calls": [
                {"name": "Write", "input": {"file_path": "a.txt", "content": "from beta\n"}}
            ]
        },
        {"text": "reply two"},
        {"tool_calls": [{"name": "Edit", "input": edit}]},
        {"text": "reply three"},
        {"text": "reply four"},
        {"text": "reply five"},
        {"text": "reply six"},
    ]
    with _peri(tmp_path, items, "--permission-mode", "accept-edits") as (tmux, url):
        for prompt, reply in (
            ("alpha prompt", "reply one"),
            ("beta prompt", "reply two"),
            ("gamma prompt", "reply three"),
            ("delta prompt", "reply four"),
        ):
            _type(tmux, prompt)
            tmux.wait_for(lambda s, r=reply: r in s)
        tmux.wait_for(lambda s: "· accept-edits ·" in s and "⠋" not in s)
        assert (ws / "a.txt").read_text() == "from gamma\n"
        _type(tmux, "/rewind")
        tmux.wait_for(lambda s: "Rewind to before which prompt?" in s)
        tmux("send-keys", "-t", "peri", "Down")  # the newest is selected: one down is gamma
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "Restore code and conversation" in s)
        tmux("send-keys", "-t", "peri", "Enter")
        screen = tmux.wait_for(lambda s: "Restored: a.txt" in s)
        assert "reply three" not in screen and "reply four" not in screen
        assert (ws / "a.txt").read_text() == "from beta\n"
        tmux("send-keys", "-t", "peri", "C-c")  # the prompt holds "gamma prompt": clear it
        tmux.wait_for(lambda s: "Message Peri" in s)
        _type(tmux, "epsilon prompt")
        tmux.wait_for(lambda s: "reply five" in s)
        tmux("send-keys", "-t", "peri", "C-c")
        tmux("send-keys", "-t", "peri", "C-c")
        tmux.wait_for(lambda s: "Message Peri" not in s, timeout=20)
        pane = tmp_path / "pane.bytes"
        tmux.wait_for(lambda _s: b"Resume this session with" in pane.read_bytes(), timeout=20)
        last = _texts(_requests(url)[-1]["body"])
        assert "alpha prompt" in last and "beta prompt" in last and "epsilon prompt" in last
        assert "gamma prompt" not in last and "delta prompt" not in last
        # the transcript still holds them
        transcript = next((tmp_path / "home" / "projects").glob("*/*.jsonl"))
        lines = transcript.read_text()
        assert "gamma prompt" in lines and "delta prompt" in lines and '"type":"rewind"' in lines
        # resume (headless) sees the same view
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))},
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "test",
            "PERI_HOME": str(tmp_path / "home"),
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
        }
        done = subprocess.run(
            [sys.executable, "-m", "peri_cli", "-r", transcript.stem, "-p", "zeta prompt"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        resumed = _texts(_requests(url)[-1]["body"])
    assert "alpha prompt" in resumed and "epsilon prompt" in resumed and "zeta prompt" in resumed
    assert "gamma prompt" not in resumed and "delta prompt" not in resumed
