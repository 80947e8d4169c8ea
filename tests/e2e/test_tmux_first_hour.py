"""Issue 42 in a real terminal, at 120x40 and at 60x20: the real `peri` in tmux against the
loopback fake server. What a new user stumbled on: the prompt's hint cut mid-word, `/comapct`
sent to the model, an Edit approval's diff twice and unnumbered, a bypass session that started
without a word, and `/model` that only listed names."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_tmux import start_peri, start_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
SIZES = [(120, 40), (60, 20)]
EDIT = {"file_path": "notes.txt", "old_string": "line 10\n", "new_string": "line ten\n"}


def type_line(tmux: object, text: str) -> None:
    tmux("send-keys", "-t", "peri", "-l", text)  # type: ignore[operator]
    tmux("send-keys", "-t", "peri", "Enter")  # type: ignore[operator]


@pytest.mark.parametrize("size", SIZES, ids=["120x40", "60x20"])
def test_a_mistyped_command_and_an_edit_approval(tmp_path: Path, size: tuple[int, int]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    items: list[dict[str, object]] = [
        {"text": "You typed /comapct."},
        {"tool_calls": [{"name": "Edit", "input": EDIT}]},
        {"text": "Edited."},
    ]
    server = start_server(tmp_path, items)
    tmux = start_peri(tmp_path, next(server), size=size)
    try:
        # (the key footer's whole keys are checked by Pilot, tests/tui/test_first_hour.py: in
        # tmux under pytest the last rows are not reliably the footer's at 60x20)
        screen = tmux.wait_for(lambda s: "Message Peri" in s)
        hint = next(line for line in screen.splitlines() if "Message Peri" in line)
        assert not hint.split("│")[1].rstrip().endswith("·"), hint  # whole pieces only
        tmux("send-keys", "-t", "peri", "-l", "/comapct")
        # (Enter only once the prompt shows it all: while "/c" was being read the completion
        # menu could be open, and an Enter then would pick from it)
        tmux.wait_for(lambda s: "│ /comapct" in s)
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: "Did you mean" in s and "/compact?" in s)
        tmux("send-keys", "-t", "peri", "Enter")  # again: it goes to the model as typed
        tmux.wait_for(lambda s: "You typed /comapct." in s)
        type_line(tmux, "rename line 10")
        screen = tmux.wait_for(lambda s: "+10 │ line ten" in s)
        assert "-10 │ line 10" in screen and screen.count("line ten") == 1
        tmux("send-keys", "-t", "peri", "y")
        tmux.wait_for(lambda s: "Edited." in s)
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
    assert (ws / "notes.txt").read_text().count("line ten\n") == 1


@pytest.mark.parametrize("size", SIZES, ids=["120x40", "60x20"])
def test_bypass_mode_starts_with_its_warning_on_screen(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    server = start_server(tmp_path, [])
    tmux = start_peri(tmp_path, next(server), "--permission-mode", "bypass", size=size)
    try:
        screen = tmux.wait_for(lambda s: "Message Peri" in s and "Bypass mode" in s)
        assert "without asking" in screen
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)


@pytest.mark.parametrize("size", SIZES, ids=["120x40", "60x20"])
def test_model_alone_opens_a_picker_and_enter_switches(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    server = start_server(tmp_path, [{"text": "switched"}])
    tmux = start_peri(tmp_path, next(server), size=size)
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        type_line(tmux, "/model")
        screen = tmux.wait_for(lambda s: "Switch the model" in s and "Esc keep it" in s)
        assert "claude-opus-4-5-20251101" in screen  # the provider's own list
        tmux("send-keys", "-t", "peri", "Enter")  # the first listed
        tmux.wait_for(lambda s: "Model switched to claude-sonnet-4-5-20250929" in s)
    finally:
        tmux("kill-server")
        with contextlib.suppress(StopIteration):
            next(server)
