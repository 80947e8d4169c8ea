"""Sandbox overhead: what bubblewrap adds to each Bash command.

    .venv/bin/python bench/sandbox_overhead.py            # ~30 s
    .venv/bin/python bench/sandbox_overhead.py --runs 50 --files 1000

Each case runs `bash -c CMD` the way the Bash tool starts it, unsandboxed and wrapped by the
session's sandbox (the default policy: read-only root, the workspace writable, the guarded and
hidden paths, tmpfs over /tmp and /run), interleaved so noise hits both alike. Commands: `true`,
and `git status` in a repository of 1,000 committed files. Target: under 20 ms per command.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _util as u

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import SandboxPlaces, build_policy
from peri_cli.sandbox.probe import probe
from peri_cli.sandbox.runner import BwrapSandbox


def make_repo(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    for i in range(files):
        sub = root / f"d{i % 20}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i}.txt").write_text(f"line {i}\n")
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "files"],
    ):
        subprocess.run(argv, cwd=root, check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--files", type=int, default=1000)
    args = ap.parse_args()
    u.banner("sandbox overhead per Bash command")
    found = probe()
    if not found.available:
        print(f"unavailable: {found.why_not}")
        return
    with tempfile.TemporaryDirectory(prefix="peri-bench-") as tmp:
        root = Path(tmp)
        ws, home = root / "ws", root / "home"
        make_repo(ws, args.files)
        (home / ".peri").mkdir(parents=True)
        (root / "t").mkdir()
        places = SandboxPlaces(ws, home, home / ".peri", root / "t", {})
        policy = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
        sandbox = BwrapSandbox(policy, lambda _: False)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home)}

        def case(command: str, sandboxed: bool):  # type: ignore[no-untyped-def]
            def once() -> float:
                argv = ["bash", "-c", command]
                t = time.perf_counter()
                wrapped = sandbox.wrap(argv, env, ws) if sandboxed else None
                subprocess.run(
                    wrapped.argv if wrapped else argv,
                    env=wrapped.env if wrapped else env,
                    cwd=ws,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=True,
                )
                if wrapped:
                    wrapped.finish()
                return time.perf_counter() - t

            return once

        rows = []
        for command in ("true", "git status"):
            got = u.interleaved(
                {"plain": case(command, False), "sandboxed": case(command, True)}, args.runs
            )
            plain, boxed = u.median(got["plain"]), u.median(got["sandboxed"])
            overhead = boxed - plain
            rows.append(
                [
                    f"`{command}`",
                    u.ms(plain),
                    u.ms(boxed),
                    u.ms(overhead),
                    u.verdict(overhead < 0.020),
                ]
            )
        sandbox.close()
    print(u.table(["command", "unsandboxed", "sandboxed", "overhead", "< 20 ms"], rows))


if __name__ == "__main__":
    main()
