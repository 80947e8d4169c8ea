"""Peri's own reads of workspace files never trust the file type (issue 37 item 5): a FIFO or a
link to /dev/zero planted at `.git/HEAD`, or where a file read before a compaction was, costs a
line of context, never a hang or Peri's memory; SIGTERM still ends Peri. The real `peri` process
against the loopback fake server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Peri, texts
from tests.e2e.test_tmux import ANSWER, fake_server, start_peri
from tests.mcp.helpers import alive, wait_for

__all__ = ["fake_server"]  # the fixture, used by name

BRANCH_LINE = "Current git branch"


def git_repo(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(workspace)], check=True)
    return workspace / ".git" / "HEAD"


def fifo_head(workspace: Path) -> Path:
    head = git_repo(workspace)
    head.unlink()
    os.mkfifo(head)  # nobody ever writes to it: a plain open() waits forever
    return head


def request_text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("system", "")) + "\n".join(texts(body))


@pytest.mark.timeout(180)
def test_a_fifo_at_git_head_blocks_no_run(peri: Peri) -> None:
    head = git_repo(peri.workspace)
    peri.server.set_script([{"text": "answered"}])
    done = peri.run("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert BRANCH_LINE in request_text(peri.model_calls()[-1])  # the line the FIFO costs
    head.unlink()
    os.mkfifo(head)
    for _ in range(2):  # this session's next request, and a new session in that folder
        peri.server.set_script([{"text": "answered"}])
        done = peri.run("-p", "hi", timeout=60)  # blocked, it would be killed at the timeout
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "answered"
        assert BRANCH_LINE not in request_text(peri.model_calls()[-1])


# `peri` under an address-space cap, so that a broken Peri reading /dev/zero fails at the cap
# (and the test sees how far it got) instead of taking the machine's memory. Started by a small
# wrapper, not exec'd from the test's fork: a process's peak memory (ru_maxrss) carries over
# from the process it was forked from, and pytest late in a full run is hundreds of MiB.
# argv[1] is where the wrapper writes Peri's peak in KiB; the rest is Peri's command line.
CAPPED = (
    "import resource, subprocess, sys; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
    "code = subprocess.call([sys.executable, '-m', 'peri_cli', *sys.argv[2:]]); "
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
    "sys.exit(code)"
)


@pytest.mark.timeout(180)
def test_git_head_linked_to_dev_zero_costs_no_memory(peri: Peri, tmp_path: Path) -> None:
    head = git_repo(peri.workspace)
    head.unlink()
    head.symlink_to("/dev/zero")
    peri.server.set_script([{"text": "answered"}])
    peak = tmp_path / "peak"
    done = subprocess.run(
        [sys.executable, "-c", CAPPED, str(peak), "-p", "hi"],
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answered"
    peak_mib = int(peak.read_text()) // 1024  # KiB on Linux
    assert peak_mib < 512, f"peri peaked at {peak_mib} MiB"


def _wait_for_request(peri: Peri, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not peri.server.requests and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert peri.server.requests, "peri never sent its request"


@pytest.mark.timeout(180)
def test_sigterm_ends_a_run_in_a_folder_with_a_fifo_head(peri: Peri) -> None:
    fifo_head(peri.workspace)
    peri.server.set_script([{"text": "a slow reply " * 40, "delay": 0.5}])
    proc = peri.popen("-p", "hi")
    try:
        _wait_for_request(peri, proc)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1 and "cancelled" in err, (out, err)
    assert "a slow reply " * 40 not in out


@pytest.mark.timeout(180)
def test_compaction_rereads_no_fifo_planted_over_a_read_file(peri: Peri) -> None:
    notes = peri.workspace / "notes.md"
    notes.write_text("the notes the model read\n")
    peri.server.set_script(
        [{"tool_calls": [{"name": "Read", "input": {"file_path": "notes.md"}}]}, {"text": "read"}]
    )
    first = peri.json("-p", "read the notes")
    assert first["result"] == "read", first
    notes.unlink()
    os.mkfifo(notes)  # a command swapped the file for a FIFO before the compaction
    summary = "<summary>Goal: read the notes. Done. Next: none.</summary>"
    peri.server.set_script([{"text": summary}, {"text": "carrying on"}])
    done = peri.run("-p", "/compact", "-r", first["session_id"], timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Compacted" in done.stdout
    done = peri.run("-p", "carry on", "-r", first["session_id"], timeout=60)
    assert done.returncode == 0, done.stderr
    after = "\n".join(texts(peri.model_calls()[-1]))
    assert "Goal: read the notes" in after and '<file path="notes.md">' not in after


@pytest.mark.skipif(
    not Path("/usr/bin/tmux").exists() and not Path("/usr/local/bin/tmux").exists(),
    reason="tmux is not installed",
)
@pytest.mark.timeout(180)
def test_the_tui_answers_and_ends_on_sigterm_with_a_fifo_head(
    tmp_path: Path, fake_server: str
) -> None:
    (tmp_path / "ws").mkdir()
    fifo_head(tmp_path / "ws")
    tmux = start_peri(tmp_path, fake_server)
    peri = int(tmux("display-message", "-p", "-t", "peri", "#{pane_pid}").strip())
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        tmux("send-keys", "-t", "peri", "-l", "say hello")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: ANSWER in s)
        os.kill(peri, signal.SIGTERM)
        assert wait_for(lambda: not alive(peri), timeout=30), tmux.screen()
    finally:
        tmux("kill-server")
        if alive(peri):  # blocked where no signal it handles can reach it
            os.kill(peri, signal.SIGKILL)
