"""SIGTERM and SIGHUP: `peri acp` ends the running turn, stops every process of every session (a
running command, background commands) and exits (issue 40, item 2)."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

from tests.acp.conftest import Editor
from tests.e2e.conftest import Peri


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def descendants(root: int) -> set[int]:
    """Every living process below `root` (by parent pid)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


async def pid_in(path: Path, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path.name} never written"
        await asyncio.sleep(0.02)
    return int(path.read_text())


def _bash(command: str, *, background: bool = False) -> dict[str, object]:
    args: dict[str, object] = {"command": command}
    if background:
        args["run_in_background"] = True
    return {"name": "Bash", "input": args}


WAIT_THEN_SLEEP = "until [ -s two-bg.pid ]; do sleep 0.02; done; echo $$ > fg.pid; sleep 300"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_ends_the_turn_stops_every_process_and_exits(
    peri: Peri, editor: Editor, sig: signal.Signals
) -> None:
    peri.server.set_script(
        [
            {
                "when": "first session",
                "tool_calls": [_bash("sleep 300 & echo $! > one-bg.pid", background=True)],
            },
            {"when": "first session", "text": "started it"},
            {
                "when": "second session",
                "tool_calls": [
                    _bash("sleep 300 & echo $! > two-bg.pid", background=True),
                    _bash(WAIT_THEN_SLEEP),
                ],
            },
            {"when": "second session", "text": "never reached"},
        ]
    )
    log = (peri.workspace.parent / "acp-stderr.log").open("ab")
    try:
        async with spawn_agent_process(
            editor,
            sys.executable,
            "-m",
            "peri_cli",
            "acp",
            "--permission-mode",
            "bypass",
            env=peri.env(),
            cwd=peri.workspace,
            transport_kwargs={"stderr": log.fileno()},
        ) as (conn, process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 30)
            cwd = str(peri.workspace)
            one = await conn.new_session(cwd=cwd, mcp_servers=[])
            done = await conn.prompt(
                session_id=one.session_id, prompt=[text_block("first session")]
            )
            assert done.stop_reason == "end_turn"
            two = await conn.new_session(cwd=cwd, mcp_servers=[])
            running = asyncio.create_task(
                conn.prompt(session_id=two.session_id, prompt=[text_block("second session")])
            )
            names = ("one-bg.pid", "two-bg.pid", "fg.pid")
            pids = [await pid_in(peri.workspace / name) for name in names]
            assert all(alive(pid) for pid in pids)
            children = descendants(process.pid)
            assert set(pids) <= children
            process.send_signal(sig)
            code = await asyncio.wait_for(process.wait(), 20)
            answer = await asyncio.wait_for(running, 5)
    finally:
        log.close()
    stderr = (peri.workspace.parent / "acp-stderr.log").read_text()
    assert answer.stop_reason == "cancelled"  # the turn was ended, and said so
    assert code == 128 + sig, stderr
    assert "Traceback" not in stderr
    left = [pid for pid in children if alive(pid)]
    assert not left, (left, stderr)
