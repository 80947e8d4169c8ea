"""The wire format with raw JSON-RPC lines: malformed input is answered and the agent keeps
serving; stdout holds JSON-RPC and nothing else, even while a command prints."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import IO, Any

from tests.e2e.conftest import Peri


def _read_until(out: IO[str], want_id: int, seen: list[dict[str, Any]]) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = out.readline()
        assert line, "peri acp closed stdout"
        message = json.loads(line)  # every stdout line is JSON-RPC
        assert message["jsonrpc"] == "2.0"
        seen.append(message)
        if message.get("id") == want_id and "method" not in message:
            return message
    raise AssertionError(f"no answer to {want_id}")


def test_malformed_lines_are_answered_and_serving_goes_on(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo to-stdout; echo e >&2"}}]},
            {"text": "ran it"},
        ]
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "peri_cli", "acp", "--permission-mode", "bypass"],
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[dict[str, Any]] = []

    def send(line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    def request(rid: int, method: str, params: Any) -> dict[str, Any]:
        send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
        assert proc.stdout is not None
        return _read_until(proc.stdout, rid, seen)

    try:
        send("garbage{")
        send("[1,2]")
        init = request(1, "initialize", {"protocolVersion": 1})
        assert seen[0] == {"jsonrpc": "2.0", "id": None, "error": seen[0]["error"]}
        assert seen[0]["error"]["code"] == -32700
        assert seen[1]["id"] is None and seen[1]["error"]["code"] == -32600
        assert init["result"]["protocolVersion"] == 1
        assert init["result"]["agentCapabilities"]["loadSession"] is True
        assert request(2, "no/such/method", {})["error"]["code"] == -32601
        assert request(3, "session/new", {"cwd": 5})["error"]["code"] == -32602
        new = request(4, "session/new", {"cwd": str(peri.workspace), "mcpServers": []})
        sid = new["result"]["sessionId"]
        text = {"type": "text", "text": "run it"}
        done = request(5, "session/prompt", {"sessionId": sid, "prompt": [text]})
        assert done["result"] == {"stopReason": "end_turn"}
    finally:
        proc.stdin.close()
        proc.wait(10)
    updates = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    kinds = [u["sessionUpdate"] for u in updates]
    assert "tool_call" in kinds and "agent_message_chunk" in kinds
    ran = [u for u in updates if u.get("status") == "completed"]
    assert "to-stdout" in ran[0]["content"][0]["content"]["text"]
    assert proc.returncode == 0
