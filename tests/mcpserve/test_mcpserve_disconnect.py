"""Issue 40, a client that goes away mid-call leaves no process behind: the run is cancelled and
every command it started (those that left its process group included) ends with it, whether the
official client leaves, stdin simply closes, or the server gets SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import Peri
from tests.e2e.test_bash_reaper_e2e import _pids, bash
from tests.mcpserve.conftest import serving
from tests.tools.test_bash_leftovers import ESCAPES, NAMES, gone_within, kill_all

FOREGROUND = ESCAPES + "; echo $$ > shell.pid; sleep 300"
ALL = [*NAMES, *(n.replace(".pid", ".bg") for n in NAMES), "shell.pid"]


def script(peri: Peri) -> None:
    background = ESCAPES.replace(".pid", ".bg")
    peri.server.set_script(
        [
            {"tool_calls": [bash(background, run_in_background=True), bash(FOREGROUND)]},
            {"text": "done"},
        ]
    )


async def _wait_pids(peri: Peri) -> list[int]:
    return await asyncio.get_running_loop().run_in_executor(None, _pids, peri, ALL)


async def test_the_official_client_leaving_mid_call_leaves_no_process(peri: Peri) -> None:
    script(peri)
    found: list[int] = []
    try:
        async with serving(peri, "--permission-mode", "bypass") as client:
            args = {"prompt": "go", "permission_mode": "bypass"}
            task = asyncio.create_task(client.call_tool("peri", args))
            found = await _wait_pids(peri)
            assert gone_within(found, 0) == found  # all running
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        # (the SDK ends the server's process group; what left it, only Peri can end)
        assert gone_within(found, 10) == []
    finally:
        kill_all(found)


def _workers_of(pid: int) -> list[str]:
    """The stream workers (`providers.worker`, started first thing) still running for `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"peri_cli.providers.worker" in argv and str(pid).encode() in argv:
            found.append(entry.name)
    return found


def _serve(peri: Peri) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "peri_cli", "mcp", "serve", "--permission-mode", "bypass"],
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _send(proc: subprocess.Popen[bytes], *messages: dict[str, object]) -> None:
    assert proc.stdin is not None
    for message in messages:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    proc.stdin.flush()


def _start_call(proc: subprocess.Popen[bytes]) -> None:
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    _send(proc, {"id": 1, "method": "initialize", "params": init})
    assert proc.stdout is not None
    assert b'"id":1' in proc.stdout.readline()
    args = {"prompt": "go", "permission_mode": "bypass"}
    _send(
        proc,
        {"method": "notifications/initialized"},
        {"id": 2, "method": "tools/call", "params": {"name": "peri", "arguments": args}},
    )


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
def test_the_server_ends_its_run_and_exits_on_its_own(peri: Peri, how: str) -> None:
    script(peri)
    proc = _serve(peri)
    found: list[int] = []
    try:
        _start_call(proc)
        found = _pids(peri, ALL)
        assert gone_within(found, 0) == found
        started = time.monotonic()
        if how == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        else:
            assert proc.stdin is not None
            proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 5
        assert gone_within(found, 5) == []
        deadline = time.monotonic() + 5
        while _workers_of(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _workers_of(proc.pid) == []
    finally:
        proc.kill()
        proc.wait()
        kill_all(found)
