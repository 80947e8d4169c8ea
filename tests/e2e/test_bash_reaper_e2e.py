"""Issue 37 item 6 end to end: with the sandbox off, what a command starts outside its process group
ends with it (foreground) or with Peri (background), Peri killed with SIGKILL included, and the
model is told what happened."""

from __future__ import annotations

import signal
import time

from tests.e2e.conftest import Peri
from tests.e2e.test_tools_e2e import _tool_results
from tests.tools.test_bash_leftovers import ESCAPES, NAMES, gone_within, kill_all


def bash(command: str, **more: object) -> dict[str, object]:
    return {"name": "Bash", "input": {"command": command, **more}}


def _pids(peri: Peri, names: list[str], timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    files = [peri.workspace / n for n in names]
    while not all(f.exists() and f.read_text().strip() for f in files):
        assert time.monotonic() < deadline, [f.name for f in files if not f.exists()]
        time.sleep(0.02)
    return [int(f.read_text()) for f in files]


def test_item37_6_leftovers_end_with_the_command_and_background_ones_with_peri(
    peri: Peri,
) -> None:
    background = ESCAPES.replace(".pid", ".bg")
    peri.server.set_script(
        [
            {"tool_calls": [bash(background, run_in_background=True), bash(ESCAPES + "; echo ok")]},
            {"text": "done"},
        ]
    )
    result = peri.json("-p", "go", "--permission-mode", "bypass")
    found = _pids(peri, [*NAMES, *(n.replace(".pid", ".bg") for n in NAMES)])
    try:
        assert result["result"] == "done", result
        started, foreground = _tool_results(peri.model_calls()[-1])
        assert "every process it started, is stopped when Peri exits" in started, started
        assert "they were stopped when it finished" in foreground, foreground
        assert gone_within(found, 10) == []
    finally:
        kill_all(found)


def test_item37_6_a_sigkill_of_peri_leaves_no_command_running(peri: Peri) -> None:
    background = ESCAPES.replace(".pid", ".bg")
    foreground = ESCAPES + "; echo $$ > shell.pid; sleep 300"
    peri.server.set_script(
        [
            {"tool_calls": [bash(background, run_in_background=True), bash(foreground)]},
            {"text": "done"},
        ]
    )
    proc = peri.popen("-p", "go", "--permission-mode", "bypass", "--output-format", "json")
    found: list[int] = []
    try:
        names = [*NAMES, *(n.replace(".pid", ".bg") for n in NAMES), "shell.pid"]
        found = _pids(peri, names)
        assert gone_within(found, 0) == found  # all running
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        # The bound is 2 s; waited longer here so that a loaded machine cannot fail it
        # (bench/reaper_kill.py measures the time).
        assert gone_within(found, 10) == []
        assert len(peri.model_calls()) == 1  # (killed before a result was sent)
    finally:
        proc.kill()
        proc.wait()
        kill_all(found)
