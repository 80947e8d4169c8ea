"""Start-up in two phases, in the real `peri` process under tmux: the first frame (the prompt,
the model the settings files name) draws before the rest is read, and what the second phase reads
(guides, skills, agent types, the trust question, the frozen system prompt) can neither hang
that screen nor be skipped by a prompt typed meanwhile."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import system_text
from tests.e2e.test_tmux import Tmux, start_peri, wait_for_bytes
from tests.fakeserver import FakeServer

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ANSWER = "Started and answered."
GUIDE = "GUIDE-MARKER-5d1c: answer in one line."
OUTSIDE = "OUTSIDE-MARKER-9e2a: a shared guide outside the workspace."
# The second phase imports the core and the provider SDK (a few hundred ms even on an idle
# machine) and lists the agent type folder (only the first 200 files are parsed; the listing and
# sort of thousands still add to it); the test notices the first frame within 20 ms and types.
AGENT_FILES = 4000


def first_frame(s: str) -> bool:
    return "claude-test-model" in s  # the model the settings file names, before the runtime


def _agent_files(workspace: Path, count: int) -> None:
    folder = workspace / ".claude" / "agents"
    folder.mkdir(parents=True)
    for i in range(count):
        text = f"---\nname: a{i}\ndescription: agent {i}\n---\nBe a{i}.\n"
        (folder / f"a{i}.md").write_text(text)


def _wait_closely(tmux: Tmux, check: Callable[[str], bool], timeout: float = 60) -> None:
    """`wait_for` at a 20 ms pace rather than 200 ms: the second phase is racing the keys."""
    deadline = time.monotonic() + timeout
    while not check(tmux.screen()):
        assert time.monotonic() < deadline, f"timed out; the screen was:\n{tmux.screen()}"
        time.sleep(0.02)


@pytest.mark.timeout(240)
def test_a_prompt_typed_while_starting_waits_for_the_complete_frozen_prompt(
    tmp_path: Path,
) -> None:
    """An untrusted workspace whose guide imports a file outside it (read only once trusted),
    with thousands of agent files to read: the prompt typed at the first frame is queued, the
    trust question comes after, and the request carries the guide and the outside import.
    (The prompt has none of the dialog's keys, y/t/n/1/2: typed into it, it would not trust.)"""
    workspace, shared = tmp_path / "ws", tmp_path / "shared"
    workspace.mkdir()
    shared.mkdir()
    (shared / "team.md").write_text(OUTSIDE + "\n")
    (workspace / "CLAUDE.md").write_text(f"{GUIDE}\n<!-- @import ../shared/team.md -->\n")
    (workspace / ".peri").mkdir()
    (workspace / ".peri" / "settings.json").write_text('{"model": "claude-test-model"}')
    _agent_files(workspace, AGENT_FILES)
    with FakeServer([{"text": ANSWER}]) as server:
        tmux = start_peri(tmp_path, server.url, size=(120, 40))
        try:
            _wait_closely(tmux, first_frame)
            tmux("send-keys", "-t", "peri", "-l", "hello")
            tmux("send-keys", "-t", "peri", "Enter")
            screen = tmux.wait_for(lambda s: "queued: hello" in s or "Trust this" in s)
            assert "queued: hello" in screen, "the second phase ended before the prompt was sent"
            assert not server.requests  # nothing is sent before the session exists
            tmux.wait_for(lambda s: "Trust this folder?" in s, timeout=60)
            tmux("send-keys", "-t", "peri", "t")
            tmux.wait_for(lambda s: ANSWER in s, timeout=60)
        finally:
            tmux("kill-server")
        calls = [r["body"] for r in server.requests if r["status"] == 200]
    assert len(calls) == 1
    system = system_text(calls[0])
    assert GUIDE in system and OUTSIDE in system  # built after the answer: the trusted guides
    assert "hello" in str(calls[0]["messages"])


@pytest.mark.timeout(240)
def test_hostile_files_read_after_the_first_frame_cannot_hang_it(tmp_path: Path) -> None:
    """FIFOs named AGENTS.md, SKILL.md and an agent file, and a 100 MB CLAUDE.md (sparse): the
    first frame draws, keys echo, and the session starts with the files refused, not waited on
    (no writer ever opens the FIFOs)."""
    workspace = tmp_path / "ws"
    (workspace / ".peri").mkdir(parents=True)
    (workspace / ".peri" / "settings.json").write_text('{"model": "claude-test-model"}')
    os.mkfifo(workspace / "AGENTS.md")
    with (workspace / "CLAUDE.md").open("wb") as f:
        f.truncate(100 << 20)
    (workspace / ".claude" / "skills" / "evil").mkdir(parents=True)
    os.mkfifo(workspace / ".claude" / "skills" / "evil" / "SKILL.md")
    (workspace / ".claude" / "agents").mkdir(parents=True)
    os.mkfifo(workspace / ".claude" / "agents" / "evil.md")
    with FakeServer([{"text": ANSWER}]) as server:
        tmux = start_peri(tmp_path, server.url, size=(60, 20))
        try:
            tmux.wait_for(first_frame, timeout=60)
            tmux("send-keys", "-t", "peri", "-l", "still typing")
            tmux.wait_for(lambda s: "still typing" in s, timeout=30)
            tmux.wait_for(lambda s: "Peri in" in s, timeout=60)  # the session's first notice
            tmux("send-keys", "-t", "peri", "Enter")
            tmux.wait_for(lambda s: ANSWER in s, timeout=60)
        finally:
            tmux("kill-server")
        assert any(r["status"] == 200 for r in server.requests)


@pytest.mark.timeout(240)
def test_a_fifo_settings_file_read_for_the_first_frame_ends_the_start_with_its_error(
    tmp_path: Path,
) -> None:
    """The first phase reads the settings files on the UI thread: a FIFO there is refused at
    once (never opened for reading), and the runtime's check of the same text ends the start."""
    workspace = tmp_path / "ws"
    (workspace / ".peri").mkdir(parents=True)
    os.mkfifo(workspace / ".peri" / "settings.local.json")
    with FakeServer([{"text": ANSWER}]) as server:
        tmux = start_peri(tmp_path, server.url, size=(120, 40))
        try:
            wait_for_bytes(tmp_path, "not a regular file", timeout=60)
        finally:
            tmux("kill-server")


@pytest.mark.timeout(240)
def test_a_prompt_typed_before_peri_draws_is_sent_by_its_enter(tmp_path: Path) -> None:
    """The question and its Enter typed while Peri starts, before its first frame: the Enter
    sends it instead of becoming a new line in it (with the terminal's ICRNL on, it would
    arrive as Ctrl+J). Typed once Peri has cleared ICRNL, seen from outside with `stty`."""
    with FakeServer([{"text": ANSWER}]) as server:
        tmux = start_peri(tmp_path, server.url, size=(120, 40))
        try:
            tty = tmux("display-message", "-p", "-t", "peri", "#{pane_tty}").strip()
            deadline = time.monotonic() + 60
            while "-icrnl" not in _stty(tty):
                assert time.monotonic() < deadline, "ICRNL was never cleared"
                time.sleep(0.005)
            drawn = tmux("display-message", "-p", "-t", "peri", "#{alternate_on}").strip()
            tmux("send-keys", "-t", "peri", "-l", "typed ahead")
            tmux("send-keys", "-t", "peri", "Enter")
            tmux.wait_for(lambda s: ANSWER in s, timeout=60)
        finally:
            tmux("kill-server")
        (call,) = [r["body"] for r in server.requests if r["status"] == 200]
    assert "typed ahead" in str(call["messages"])
    assert drawn == "0", "the first frame was up before the keys: nothing typed ahead was tried"


def _stty(tty: str) -> str:
    done = subprocess.run(["stty", "-F", tty, "-a"], capture_output=True, text=True, check=False)
    return done.stdout
