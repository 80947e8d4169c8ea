"""The reaper (issue 37 item 6): what starting Bash's commands through it costs, and how soon a
command's whole tree is gone after Peri is killed with SIGKILL.

    .venv/bin/python bench/bash_reaper.py              # ~30 s
    .venv/bin/python bench/bash_reaper.py --runs 50 --kills 5

1. `true` through `BashTool` (the reaper's keeper starts it, then looks for leftovers) vs the same
   `bash -c true` started directly by asyncio as the Bash tool did before, interleaved medians.
2. A process runs a background command and a foreground one, each with a `setsid` child, a
   `nohup setsid` child and a double-forked one; it is killed with SIGKILL; the time until none
   of those 7 processes is alive; then the same with one more that ignores SIGTERM (it waits
   out the keeper's 1 s grace). Target: under 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _util as u

from peri_cli.base.tool import ToolContext
from peri_cli.tools.bash import BashParams, BashTool
from tests.tools.test_bash_leftovers import _RUNNER, ESCAPES, NAMES, kill_all


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def start_cost(root: Path, runs: int) -> list[list[str]]:
    ctx = ToolContext(workspace=root, session_dir=root / "s")
    tool = BashTool()
    loop = asyncio.new_event_loop()

    def through_reaper() -> float:
        t = time.perf_counter()
        loop.run_until_complete(tool.call(BashParams(command="true"), ctx))
        return time.perf_counter() - t

    def direct() -> float:
        async def once() -> None:
            proc = await asyncio.create_subprocess_exec(
                "bash", "-c", "true", cwd=root, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            await proc.communicate()

        t = time.perf_counter()
        loop.run_until_complete(once())
        return time.perf_counter() - t

    got = u.interleaved({"direct": direct, "reaper": through_reaper}, runs)
    loop.close()
    plain, reaped = u.median(got["direct"]), u.median(got["reaper"])
    return [["`true`, one command", u.ms(plain), u.ms(reaped), u.ms(reaped - plain)]]


# One more escape that ignores SIGTERM: it waits out the keeper's grace for SIGKILL.
STUBBORN = "setsid sh -c 'trap \"\" TERM; echo $$ > stubborn.pid; while :; do sleep 1; done' & "


def time_to_gone(root: Path, *, stubborn: bool) -> float:
    ws = Path(tempfile.mkdtemp(dir=root))
    background = ESCAPES.replace(".pid", ".bg")
    foreground = (STUBBORN if stubborn else "") + ESCAPES + "; sleep 300"
    argv = [sys.executable, "-c", _RUNNER, str(ws), str(ws / "s"), background, foreground]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    names = [*NAMES, *(n.replace(".pid", ".bg") for n in NAMES)]
    files = [ws / n for n in [*names, *(["stubborn.pid"] if stubborn else [])]]
    deadline = time.monotonic() + 30
    while not all(f.exists() and f.read_text().strip() for f in files):
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("the commands did not start")
        time.sleep(0.01)
    found = [int(f.read_text()) for f in files]
    os.kill(proc.pid, signal.SIGKILL)
    t = time.perf_counter()
    proc.wait()
    while any(_alive(p) for p in found) and time.perf_counter() - t < 30:
        time.sleep(0.005)
    took = time.perf_counter() - t
    kill_all(found)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--kills", type=int, default=5)
    args = parser.parse_args()
    u.banner("Bash through the reaper")
    print(f"{u.load()}\n")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows = start_cost(root, args.runs)
        print(u.table(["case", "direct (before)", "through the reaper", "difference"], rows))
        print()
        rows = []
        for stubborn, what in ((False, "7 processes gone"), (True, "+1 ignoring SIGTERM")):
            gone = [time_to_gone(root, stubborn=stubborn) for _ in range(args.kills)]
            worst = max(gone)
            median = u.ms(u.median(gone))
            rows.append([what, median, u.ms(worst), "< 2 s", u.verdict(worst < 2)])
        headers = ["after SIGKILL of Peri", "median", "worst", "target", "verdict"]
        print(u.table(headers, rows))


if __name__ == "__main__":
    main()
