"""`session/prompt` and `session/cancel` in one read (issue 40, item 1): the prompt is answered
`cancelled`, and the next prompt runs (not "a prompt is already running")."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.acp.test_acp_wire import _read_until
from tests.e2e.conftest import Peri

LONG = " ".join(f"word{i}" for i in range(200))


def test_prompt_and_cancel_in_one_read_answer_cancelled_and_later_prompts_run(
    peri: Peri,
) -> None:
    peri.server.set_script([{"text": LONG, "delay": 0.02}, {"text": "second answer"}])
    proc = subprocess.Popen(
        [sys.executable, "-m", "peri_cli", "acp"],
        cwd=peri.workspace,
        env=peri.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[dict[str, object]] = []

    def line(rid: int | None, method: str, params: object) -> str:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if rid is not None:
            message["id"] = rid
        return json.dumps(message) + "\n"

    def write(text: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(text)
        proc.stdin.flush()

    try:
        write(line(1, "initialize", {"protocolVersion": 1}))
        _read_until(proc.stdout, 1, seen)
        write(line(2, "session/new", {"cwd": str(peri.workspace), "mcpServers": []}))
        sid = _read_until(proc.stdout, 2, seen)["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        # both in one write: the agent reads them together
        write(line(3, "session/prompt", prompt) + line(None, "session/cancel", {"sessionId": sid}))
        assert _read_until(proc.stdout, 3, seen)["result"] == {"stopReason": "cancelled"}
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}
        write(line(4, "session/prompt", prompt))
        assert _read_until(proc.stdout, 4, seen)["result"] == {"stopReason": "end_turn"}
    finally:
        proc.stdin.close()
        proc.wait(10)
