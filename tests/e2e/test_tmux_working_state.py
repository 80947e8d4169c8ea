"""Issue 38 in a real terminal: the real `peri` process in tmux against the loopback fake server.
The model keeps a task list (shown above the prompt) and edits a file; `/compact` is typed at the
keyboard; the next request carries the working state with the list and the edited file."""

from __future__ import annotations

import contextlib
import json
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_tmux import start_peri, start_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TODOS = [
    {"content": "Read the config", "status": "completed", "activeForm": "Reading the config"},
    {"content": "Rename the setting", "status": "in_progress", "activeForm": "Renaming it"},
    {"content": "Write the notes", "status": "pending", "activeForm": "Writing the notes"},
]
EDIT = {"file_path": "config.ini", "old_string": "name = old", "new_string": "name = new"}


def working_states(url: str) -> list[str]:
    """The working-state text of each model request the server accepted, "" where none."""
    with urllib.request.urlopen(f"{url}/_requests", timeout=10) as response:
        found: list[dict[str, Any]] = json.load(response)
    out = []
    for r in found:
        if r["path"].startswith("/v1/messages") and r["status"] == 200:
            blocks = [b for m in r["body"]["messages"] for b in m["content"] if "text" in b]
            out.append("".join(b["text"] for b in blocks if "<working_state>" in b["text"]))
    return out


def test_compact_typed_in_a_terminal_keeps_the_task_list_and_the_edit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.ini").write_text("[main]\nname = old\n")
    items: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "TodoWrite", "input": {"todos": TODOS}}]},
        {"tool_calls": [{"name": "Edit", "input": EDIT}]},
        {"text": "Renamed it."},
        {"text": "<summary>Renamed the setting in config.ini.</summary>"},
        {"text": "Carrying on."},
    ]
    server = start_server(tmp_path, items)
    url = next(server)
    tmux = start_peri(tmp_path, url, "--permission-mode", "accept-edits", size=(120, 40))
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        tmux("send-keys", "-t", "peri", "-l", "rename the setting")
        tmux("send-keys", "-t", "peri", "Enter")
        screen = tmux.wait_for(lambda s: "Renamed it." in s and "Renaming it  1/3 done" in s)
        assert "☒ Read the config" in screen and "▸ Rename the setting" in screen
        assert "☐ Write the notes" in screen  # the strip, above the prompt
        assert (ws / "config.ini").read_text() == "[main]\nname = new\n"
        tmux("send-keys", "-t", "peri", "-l", "/compact")
        tmux.wait_for(lambda s: "Summarize older history" in s)  # the completion, typed
        tmux("send-keys", "-t", "peri", "Enter")
        screen = tmux.wait_for(lambda s: "Compacted (Full)" in s and "Message Peri" in s)
        assert "Renaming it  1/3 done" in screen  # the list outlives the compaction on screen
        tmux("send-keys", "-t", "peri", "-l", "what next")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "Carrying on." in s)
        states = working_states(url)
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
    assert len(states) == 5 and not any(states[:4])  # none before the compaction
    state = states[4]
    assert "[~] Rename the setting" in state and "Now: Renaming it" in state
    assert "[x] Read the config" in state and "[ ] Write the notes" in state
    assert "- config.ini: edited, 2 lines" in state
    assert "Permission mode: accept-edits" in state
