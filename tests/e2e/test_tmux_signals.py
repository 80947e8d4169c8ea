"""The TUI in a real terminal (tmux) ends cleanly on SIGTERM and SIGHUP: exit hooks run, the session
is released and an MCP server that ignores its closed stdin does not outlive Peri."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.e2e.test_tmux import ANSWER, Tmux, fake_server, start_peri
from tests.mcp.helpers import SERVERS, alive, pids, wait_for

__all__ = ["fake_server"]  # the fixture, used by name

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/tmux").exists() and not Path("/usr/local/bin/tmux").exists(),
    reason="tmux is not installed",
)


def configure(tmp_path: Path) -> Path:
    """A user MCP server that never answers and never reads its stdin (closing the pipe does not
    stop it); it notes its pid in the returned file."""
    pidfile = tmp_path / "pids.txt"
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    stuck = {
        "command": sys.executable,
        "args": [str(SERVERS / "hang_server.py"), "connect"],
        "env": {"PERI_TEST_PIDFILE": str(pidfile)},
    }
    (home / "settings.json").write_text(json.dumps({"mcpServers": {"stuck": stuck}}))
    return pidfile


def pane_pid(tmux: Tmux) -> int:
    return int(tmux("display-message", "-p", "-t", "peri", "#{pane_pid}").strip())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_signal_ends_the_tui_and_its_mcp_servers(
    tmp_path: Path, fake_server: str, signum: signal.Signals
) -> None:
    pidfile = configure(tmp_path)
    tmux = start_peri(tmp_path, fake_server)
    try:
        tmux.wait_for(lambda s: "Message Peri" in s)
        assert wait_for(lambda: len(pids(pidfile)) == 1), "the MCP server did not start"
        (server,) = pids(pidfile)
        peri = pane_pid(tmux)
        assert alive(peri) and alive(server)
        tmux("send-keys", "-t", "peri", "-l", "say hello")
        tmux("send-keys", "-t", "peri", "Enter")
        tmux.wait_for(lambda s: ANSWER in s)
        os.kill(peri, signum)
        assert wait_for(lambda: not alive(peri), timeout=30), tmux.screen()
        assert wait_for(lambda: not alive(server), timeout=5), "the MCP server outlived peri"
        # it ended the normal way: the terminal was given back, then the resume line printed
        # (killed by the signal, it would have done neither)
        session = next((tmp_path / "home" / "projects").glob("*/*.jsonl")).stem
        sent = (tmp_path / "pane.bytes").read_bytes()
        tail = sent[sent.rindex(b"\x1b[?1049l") :]  # after leaving the alternate screen
        assert f"Resume this session with: peri -r {session}".encode() in tail
    finally:
        tmux("kill-server")
        for pid in pids(pidfile):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
