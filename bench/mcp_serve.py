"""`peri mcp serve`: time from spawn to the first `peri` call's result, against the same prompt
through `peri -p --output-format json` to its result.

    .venv/bin/python bench/mcp_serve.py            # ~1 minute
    .venv/bin/python bench/mcp_serve.py --rounds 15

Both start a fresh `python -m peri_cli` process against the instant in-process fake server, in
interleaved rounds (serve, -p, serve, -p, ...) so machine noise hits both alike. For the server
the clock starts when the process is spawned with `initialize` already written to its stdin (what
an MCP client does), then `notifications/initialized` and `tools/call` follow its answer; it stops
at the call's result. Medians and their ratio are printed; the issue's aim is within 1.3x.
"""

from __future__ import annotations

import argparse
import json
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
from acp_first_chunk import _env  # noqa: E402

PROMPT = "Say hello."
REPLY = "Hello there, from the fake."
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench"}}


def _send(stdin: IO[str], message: dict[str, Any]) -> None:
    stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    stdin.flush()


def _answer(stdout: IO[str], rid: int) -> dict[str, Any]:
    while line := stdout.readline():
        message = json.loads(line)
        if message.get("id") == rid and "method" not in message:
            return message
    raise RuntimeError("peri mcp serve ended early")


def serve_once(env: dict[str, str], ws: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "peri_cli", "mcp", "serve"],
        cwd=ws,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, {"id": 1, "method": "initialize", "params": INIT})
        _answer(proc.stdout, 1)
        _send(proc.stdin, {"method": "notifications/initialized"})
        call = {"name": "peri", "arguments": {"prompt": PROMPT}}
        _send(proc.stdin, {"id": 2, "method": "tools/call", "params": call})
        result = _answer(proc.stdout, 2)["result"]
        took = time.perf_counter() - start
        if result["content"][0]["text"] != REPLY:
            raise RuntimeError(f"unexpected result: {result}")
        return took
    finally:
        proc.stdin.close()
        proc.wait(30)


def print_once(env: dict[str, str], ws: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "peri_cli", "-p", PROMPT, "--output-format", "json"],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    took = time.perf_counter() - start
    if json.loads(done.stdout)["result"] != REPLY:
        raise RuntimeError(f"unexpected result: {done.stdout}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    u.compile_peri()  # timed runs start from bytecode, as a user's do after the first
    serve: list[float] = []
    headless: list[float] = []
    with FakeServer() as server, tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        home.mkdir()
        ws.mkdir()
        env = _env(server, home)
        for once in (serve_once, print_once):  # warm the file cache and bytecode for both
            server.set_script([{"text": REPLY}])
            once(env, ws)
        for _ in range(args.rounds):
            server.set_script([{"text": REPLY}])
            serve.append(serve_once(env, ws))
            server.set_script([{"text": REPLY}])
            headless.append(print_once(env, ws))
    s, h = statistics.median(serve), statistics.median(headless)
    print(f"rounds: {args.rounds} (interleaved), Python {sys.version.split()[0]}, {u.load()}")
    print(f"peri mcp serve: spawn -> first call's result  median {s * 1000:7.1f} ms")
    print(f"peri -p:        start -> its result          median {h * 1000:7.1f} ms")
    print(f"ratio serve / -p: {s / h:.2f}x (aim: within 1.3x)")


if __name__ == "__main__":
    main()
