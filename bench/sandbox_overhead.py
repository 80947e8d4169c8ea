"""Sandbox overhead: what bubblewrap, the network relay and the protected-path check add to a Bash
command, end to end through `peri -p`.

    .venv/bin/python bench/sandbox_overhead.py              # ~4 min
    .venv/bin/python bench/sandbox_overhead.py --runs 30 --no-caps

Each run is the real `peri -p` against the in-process fake model server (tests/fakeserver.py):
the model calls Bash `true` CALLS times, one after the other, then answers. Runs with the
sandbox on and off alternate (interleaved, so noise hits both alike). Per command: the time from
the model request that asks for a call to the one that carries its result (the command, its
sandbox, the relay and the protected-path checks around it; the rest of the round is the same in
both), for the calls after the first; the first also pays for what a session starts once (the
reaper helper, lazy imports) and is shown apart. Per run: the whole `peri -p` (the session-start
walk and the proxy's socket included). In a repository of 1,000 committed files (target: the
median per-command overhead <= 15 ms) and in a tree at the walk's caps (3,000 folders, 20,000
files). The machine's load is printed beside: on a shared machine the figures move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _util as u

from peri_cli.sandbox.probe import probe
from tests.fakeserver import FakeServer

TARGET = 0.015  # seconds of median per-command overhead (issue 37 item 8)
CALLS = 3  # Bash calls per run: the first, and the ones a session makes afterwards
BASH_TRUE = {"tool_calls": [{"name": "Bash", "input": {"command": "true"}}]}


def _git(root: Path, *argv: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *argv],
        cwd=root,
        check=True,
        capture_output=True,
    )


def make_repo(root: Path, files: int, folders: int) -> None:
    """A committed repository of `files` files spread over `folders` folders (two levels)."""
    root.mkdir(parents=True)
    top = max(1, int(folders**0.5))
    dirs = [root / f"d{i % top}" / f"s{i}" for i in range(folders)]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (dirs[i % len(dirs)] / f"f{i}.txt").write_text(f"line {i}\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "files")


class Timed:
    """The fake server's answers (Bash `true` CALLS times, then "done"), and when each request
    came."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.times.append(time.perf_counter())
        answered = sum(
            1
            for m in body["messages"]
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        )
        return {"text": "done"} if answered >= CALLS else BASH_TRUE


# One run: (the first command, each later command, the whole run), in seconds
Sample = tuple[float, list[float], float]


def case(server: FakeServer, ws: Path, home: Path, *, sandboxed: bool) -> Callable[[], Sample]:
    settings = home / ".peri" / "settings.json"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PERI_HOME": str(home / ".peri"),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "bench-dummy-key",
        "PERI_PROVIDER": "anthropic",
    }
    if "PYTHONPATH" in os.environ:  # (another checkout's peri_cli, to compare against)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    argv = [u.PY, "-m", "peri_cli", "-p", "go", "--allowedTools", "Bash(true)"]

    def once() -> Sample:
        settings.write_text(json.dumps({"sandbox": {"enabled": sandboxed}}))
        timed = Timed()
        server.set_responder(timed)
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, check=False)
        whole = time.perf_counter() - start
        if done.returncode != 0 or len(timed.times) != CALLS + 1:
            raise RuntimeError(f"peri -p failed: {done.stdout}{done.stderr}")
        gaps = [b - a for a, b in zip(timed.times, timed.times[1:], strict=False)]
        return gaps[0], gaps[1:], whole

    return once


# Medians: (later commands, first command, whole run)
Medians = tuple[float, float, float]


def measure(ws: Path, home: Path, runs: int) -> dict[str, Medians]:
    """Medians with the sandbox off and on."""
    with FakeServer() as server:
        cases = {
            name: case(server, ws, home, sandboxed=name == "sandboxed")
            for name in ("plain", "sandboxed")
        }
        got: dict[str, list[Sample]] = {k: [] for k in cases}
        for fn in cases.values():  # warm-up: caches, bytecode
            fn()
        for _ in range(runs):
            for name, fn in cases.items():
                got[name].append(fn())
    return {
        name: (
            u.median([c for _, later, _ in xs for c in later]),
            u.median([first for first, _, _ in xs]),
            u.median([whole for _, _, whole in xs]),
        )
        for name, xs in got.items()
    }


def row(label: str, medians: dict[str, Medians], target: bool) -> list[str]:
    (plain, plain_first, plain_run) = medians["plain"]
    (box, box_first, box_run) = medians["sandboxed"]
    overhead = box - plain
    return [
        label,
        u.ms(plain),
        u.ms(box),
        u.ms(overhead),
        "<= 15 ms" if target else "(reported)",
        u.verdict(overhead <= TARGET) if target else "-",
        u.ms(box_first - plain_first),
        u.ms(box_run - plain_run),
        u.load(),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-caps", action="store_true", help="skip the tree at the walk's caps")
    args = ap.parse_args()
    u.banner("sandbox overhead per Bash command, through peri -p")
    found = probe()
    if not found.available:
        print(f"unavailable: {found.why_not}")
        return
    u.compile_peri()  # as a user's first start does: no run compiles Peri's modules
    trees = [("`true`, 1,000 files", 1000, 20, True)]
    if not args.no_caps:
        trees.append(("`true`, at the caps (3,000 folders, 20,000 files)", 20000, 2999, False))
    rows = []
    for label, files, folders, target in trees:
        root = Path(tempfile.mkdtemp(prefix="peri-bench-"))
        try:
            ws, home = root / "ws", root / "home"
            make_repo(ws, files, folders)
            (home / ".peri").mkdir(parents=True)
            rows.append(row(label, measure(ws, home, args.runs), target))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"socat: {'found' if found.socat else 'missing (no relay)'}; {args.runs} runs each, "
        f"{CALLS} commands a run; medians; overheads are sandboxed minus unsandboxed"
    )
    headers = [
        "command (later ones)",
        "unsandboxed",
        "sandboxed",
        "overhead",
        "target",
        "verdict",
        "first command",
        "per run",
        "load after",
    ]
    print(u.table(headers, rows))


if __name__ == "__main__":
    main()
