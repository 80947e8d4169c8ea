"""`peri acp`: time from `initialize` to the first `agent_message_chunk`, against the same prompt
through `peri -p --output-format stream-json --include-partial-messages` (its first `text_delta`).

    .venv/bin/python bench/acp_first_chunk.py            # ~1 minute
    .venv/bin/python bench/acp_first_chunk.py --rounds 15

Both start a fresh `python -m peri_cli` process against the instant in-process fake server, in
interleaved rounds (acp, -p, acp, -p, ...) so machine noise hits both alike. For ACP the clock
starts when the process is spawned with `initialize` already written to its stdin (what an editor
does), then `session/new` and `session/prompt` follow each answer. Medians and their ratio are
printed; the issue's aim is within 1.1x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.fakeserver import FakeServer  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import _util as u  # noqa: E402

PROMPT = "Say hello."


def _env(server: FakeServer, home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PERI_"))}
    return keep | {
        "HOME": str(home),
        "PERI_HOME": str(home / ".peri"),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-bench",
        "PERI_PROVIDER": "anthropic",
    }


def _send(stdin: IO[str], rid: int, method: str, params: dict[str, Any]) -> None:
    stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
    stdin.write("\n")
    stdin.flush()


def _answer(stdout: IO[str], rid: int) -> dict[str, Any]:
    while line := stdout.readline():
        message = json.loads(line)
        if message.get("id") == rid and "method" not in message:
            return message
    raise RuntimeError("peri acp ended early")


def acp_once(env: dict[str, str], ws: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "peri_cli", "acp"],
        cwd=ws,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, 1, "initialize", {"protocolVersion": 1})
        _answer(proc.stdout, 1)
        _send(proc.stdin, 2, "session/new", {"cwd": str(ws), "mcpServers": []})
        sid = _answer(proc.stdout, 2)["result"]["sessionId"]
        text = [{"type": "text", "text": PROMPT}]
        _send(proc.stdin, 3, "session/prompt", {"sessionId": sid, "prompt": text})
        while line := proc.stdout.readline():
            update = json.loads(line).get("params", {}).get("update", {})
            if update.get("sessionUpdate") == "agent_message_chunk":
                return time.perf_counter() - start
        raise RuntimeError("no agent_message_chunk")
    finally:
        proc.stdin.close()
        proc.wait(30)


def print_once(env: dict[str, str], ws: Path) -> float:
    start = time.perf_counter()
    argv = ["-p", PROMPT, "--output-format", "stream-json", "--include-partial-messages"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "peri_cli", *argv],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    try:
        while line := proc.stdout.readline():
            if json.loads(line).get("type") == "text_delta":
                return time.perf_counter() - start
        raise RuntimeError("no text_delta")
    finally:
        proc.stdout.read()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    u.compile_peri()  # timed runs start from bytecode, as a user's do after the first
    acp: list[float] = []
    headless: list[float] = []
    with FakeServer() as server, tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        home.mkdir()
        ws.mkdir()
        env = _env(server, home)
        acp_once(env, ws)  # warm the file cache and bytecode for both
        print_once(env, ws)
        for _ in range(args.rounds):
            server.set_script([{"text": "Hello there, from the fake."}])
            acp.append(acp_once(env, ws))
            server.set_script([{"text": "Hello there, from the fake."}])
            headless.append(print_once(env, ws))
    a, h = statistics.median(acp), statistics.median(headless)
    print(f"rounds: {args.rounds} (interleaved), Python {sys.version.split()[0]}, {u.load()}")
    print(f"peri acp: initialize -> first agent_message_chunk  median {a * 1000:7.1f} ms")
    print(f"peri -p:  start -> first text_delta                 median {h * 1000:7.1f} ms")
    print(f"ratio acp / -p: {a / h:.2f}x (aim: within 1.1x)")


if __name__ == "__main__":
    main()
