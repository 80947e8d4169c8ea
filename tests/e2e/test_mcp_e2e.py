"""MCP end to end: the real `peri -p` process, the fake model server, and real MCP servers
(mcp-server-time from PyPI, the in-repo streamable-HTTP server, one that crashes mid-call, ones
that never answer). The tools list carries the wrappers, never the MCP tools; the model finds and
runs one; a denial is decided on the target; project servers wait for trust; nothing outlives
peri."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Peri
from tests.mcp.helpers import (
    SERVERS,
    TIME_SERVER,
    alive,
    http_server,
    pids,
    server_processes,
    wait_for,
)

TIME = {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"]}


@pytest.fixture
def web() -> Iterator[str]:
    with http_server() as url:
        yield url


def script(name: str, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / name), *args]}


def configure(peri: Peri, pidfile: Path, servers: dict[str, Any]) -> None:
    """`servers` are user servers in $PERI_HOME/settings.json (they start without asking); one
    project server goes in the workspace's .mcp.json (the workspace is not trusted: it must not
    start)."""
    settings = {"mcpServers": servers}
    home = peri.home / ".peri"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps(settings))
    project = {"mcpServers": {"repo": script("crash_server.py")}}
    (peri.workspace / ".mcp.json").write_text(json.dumps(project))
    peri.extra_env |= {
        "PERI_TEST_PIDFILE": str(pidfile),
        "WEB_TOKEN": "tok-42",
        "MCP_TIMEOUT": "4000",  # ms, as in Claude Code: "stuck" fails after 4 s
    }


def execute(tool: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "tool_calls": [{"name": "ExecuteExtraTool", "input": {"tool_name": tool, "params": params}}]
    }


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in a request (either wire format)."""
    out: list[str] = []
    for message in body["messages"]:
        if message.get("role") == "tool":
            out.append(str(message.get("content")))
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    out.append("".join(c.get("text", "") for c in content))
                else:
                    out.append(str(content))
    return out


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in body.get("tools", [])]


def test_the_model_finds_and_runs_mcp_tools(peri: Peri, web: str, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids.txt"
    servers = {
        "time": TIME,
        "web": {"type": "http", "url": web, "headers": {"X-Peri-Test": "${WEB_TOKEN}"}},
        "crashy": script("crash_server.py"),
        "stuck": script("hang_server.py", "connect"),
    }
    configure(peri, pidfile, servers)
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "SearchExtraTools", "input": {"query": "current time zone"}}]},
            execute("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}),
            execute("mcp__web__secret_header", {}),
            execute("mcp__time__get_current_time", {"timezone": 7}),
            execute("mcp__crashy__crash", {}),
            execute("mcp__stuck__wait", {}),
            {"text": "all done"},
        ]
    )
    done = peri.run(
        "-p", "what time is it in Tokyo", "--output-format", "json", "--permission-mode", "bypass"
    )
    result = json.loads(done.stdout)
    assert result["is_error"] is False and result["result"] == "all done", done.stderr
    calls = peri.model_calls()
    for body in calls:  # the wrappers ride along; no MCP schema ever does
        names = tool_names(body)
        assert "SearchExtraTools" in names and "ExecuteExtraTool" in names
        assert not [n for n in names if n.startswith("mcp__")]
    found = tool_results(calls[1])[-1]
    assert '"name": "mcp__time__get_current_time"' in found
    assert '"timezone": "Asia/Tokyo"' in tool_results(calls[2])[-1]
    assert tool_results(calls[3])[-1] == "tok-42"  # `${WEB_TOKEN}` expanded into the header
    assert "timezone: 7 is not of type 'string'" in tool_results(calls[4])[-1]
    assert "closed the connection during the call" in tool_results(calls[5])[-1]
    assert "No tool named 'mcp__stuck__wait'" in tool_results(calls[6])[-1]
    # the project's server was never started, and stderr says so
    assert "workspace not trusted; ignoring what its files would loosen: MCP server 'repo'" in (
        done.stderr
    )
    started = pids(pidfile)
    assert len(started) == 2  # crashy and stuck, never repo
    assert not any(alive(p) for p in started)
    assert server_processes(pidfile) == []  # mcp-server-time too


def test_a_denial_is_decided_on_the_target(peri: Peri, tmp_path: Path) -> None:
    configure(peri, tmp_path / "pids.txt", {"time": TIME})
    peri.server.set_script(
        [
            execute("mcp__time__get_current_time", {"timezone": "UTC"}),
            execute("mcp__repo__ping", {}),
            {"text": "ok"},
        ]
    )
    result = peri.json(
        "-p", "time please", "--permission-mode", "accept-edits", "--trust-workspace"
    )
    first, second = result["permission_denials"]
    assert first["tool_name"] == "mcp__time__get_current_time"
    assert first["tool_input"] == {"timezone": "UTC"}
    assert (
        "Permission denied for mcp__time__get_current_time"
        in tool_results(peri.model_calls()[1])[-1]
    )
    # with --trust-workspace the project's own server started (and asks permission too)
    assert second["tool_name"] == "mcp__repo__ping"
    assert len(pids(tmp_path / "pids.txt")) == 1
    assert server_processes(tmp_path / "pids.txt") == []


def test_sigterm_mid_call_leaves_no_server_behind(peri: Peri, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids.txt"
    servers = {
        "time": TIME,
        "slow": script("hang_server.py", "call"),
        "stuck": script("hang_server.py", "connect"),
    }
    configure(peri, pidfile, servers)
    peri.server.set_script([execute("mcp__slow__wait", {}), {"text": "never"}])
    proc = peri.popen("-p", "wait", "--output-format", "stream-json", "--permission-mode", "bypass")
    assert proc.stdout is not None
    for line in proc.stdout:  # until the call to the server that never answers is running
        event = json.loads(line)
        if event.get("type") == "assistant" and "mcp__slow__wait" in line:
            break
    assert wait_for(lambda: len(pids(pidfile)) == 2)
    assert len(server_processes(pidfile, but=proc.pid)) == 3  # slow, stuck and time
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert wait_for(lambda: server_processes(pidfile) == [], timeout=5)
