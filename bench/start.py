"""Start: `peri --version`, and the time until the TUI has drawn its first screen and accepts input.

    .venv/bin/python bench/start.py              # ~1 minute
    .venv/bin/python bench/start.py --runs 15 --importtime
    .venv/bin/python bench/start.py --budget     # also: what the first frame imports, by room

`peri --version` is compared with `python -c pass` (the interpreter's floor; target: within 1.5x);
`peri -p hi` to its answer against an instant fake server with `python -c "import anthropic"`
(Peri cannot answer before its SDK is imported; target: within 1.1x), beside `import peri_cli.sdk`.
Peri's bytecode is written first, as a user's first start writes it. The TUI is launched
under tmux (a private server) in a fresh PERI_HOME and an empty workspace; "first screen" is the
first capture with the alternate screen on and something drawn, "accepts input" is when a probe
typed after that shows on screen. The floor is a minimal Textual app (an Input, focused) measured
the same way in the same rounds. Target (issue 24): first screen and first key echo within 1.2x
of that floor. `--budget` lists the modules imported before the first frame (`import_budget`).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u
import import_budget as ib

MINIMAL_APP = """
from textual.app import App
from textual.widgets import Input

class Minimal(App):
    AUTO_FOCUS = "Input"
    def compose(self):
        yield Input(placeholder="minimal textual app")

Minimal().run()
"""


def tui_present() -> bool:
    try:
        return importlib.util.find_spec("peri_cli.tui.app") is not None
    except ImportError:
        return False


def tui_unavailable(skip: bool) -> str | None:
    if skip:
        return "skipped (--no-tui)"
    if not u.tmux_available():
        return "unavailable (tmux not installed)"
    if not tui_present():
        return "unavailable (peri_cli.tui.app not importable yet)"
    return None


def import_profile(module: str) -> tuple[float, list[tuple[str, float]], list[tuple[str, float]]]:
    """From `python -X importtime -c "import <module>"`: total ms, self ms summed per package
    (peri_cli split per subpackage), and the heaviest single modules by self ms."""
    proc = subprocess.run(
        [u.PY, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    groups: dict[str, float] = {}
    single: list[tuple[str, float]] = []
    total = 0.0
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if not m:
            continue
        name, self_ms = m.group(4), int(m.group(1)) / 1000
        if len(m.group(3)) == 1:
            total += int(m.group(2)) / 1000
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "peri_cli" else parts[0]
        if key.startswith("_") and key not in ("_pydantic_core",):
            key = "(stdlib internals)"
        groups[key] = groups.get(key, 0.0) + self_ms
        single.append((name, self_ms))
    return (
        total,
        sorted(groups.items(), key=lambda kv: -kv[1]),
        sorted(single, key=lambda kv: -kv[1]),
    )


def tui_rows(
    samples: dict[str, list[u.StartSample]], f_first: float, f_ready: float
) -> list[list[str]]:
    rows = []
    for name, ss in samples.items():
        good = [s for s in ss if s.ok]
        if not good:
            rows.append([name, "failed: " + ss[0].error, "", "", "", ""])
            continue
        first = u.median([s.first_draw for s in good])
        ready = u.median([s.ready for s in good])
        rows.append(
            [
                name,
                u.ms(first),
                u.ratio(first, f_first),
                u.ms(ready),
                u.ratio(ready, f_ready),
                f"{u.median([s.peak_rss_mb for s in good]):.0f} MB",
            ]
        )
    return rows


def target(peri: list[u.StartSample], f_first: float, f_ready: float) -> str:
    r1 = u.median([s.first_draw for s in peri]) / f_first
    r = u.median([s.ready for s in peri]) / f_ready
    return (
        f"\ntarget (issue 24): first screen and first key echo within 1.2x of the minimal app: "
        f"{r1:.2f}x, {r:.2f}x -> {u.verdict(r1 <= 1.2 and r <= 1.2)}"
    )


def budget(env: dict[str, str], ws: Path, app_py: Path) -> str:
    """The first frame's import budget (`import_budget`): peri's, beside the minimal app's."""
    minimal = f"exec(compile(open({str(app_py)!r}).read(), 'minimal_app', 'exec'))\n"
    with u.Tmux() as tmux:
        log = app_py.parent / "imports.log"
        ib.first_frame_imports(tmux, ib.PERI, env, ws, log)  # warms the .pyc and page cache
        peri = ib.first_frame_imports(tmux, ib.PERI, env, ws, log)
        floor = ib.first_frame_imports(tmux, minimal, env, ws, log)
    return ib.report(peri, floor)


def command_start(env: dict[str, str], ws: Path, runs: int) -> None:
    """`peri --version` against the interpreter's floor."""
    cases = {
        "python -c pass": lambda: u.time_cmd([u.PY, "-c", "pass"], 1, env=env, cwd=ws, warmup=0)[0],
        "python -c 'import textual.app'": lambda: u.time_cmd(
            [u.PY, "-c", "import textual.app"], 1, env=env, cwd=ws, warmup=0
        )[0],
        "peri --version": lambda: u.time_cmd([u.PERI, "--version"], 1, env=env, cwd=ws, warmup=0)[
            0
        ],
    }
    u.compile_peri()
    t = u.interleaved(cases, runs)
    base = u.median(t["python -c pass"])
    print(f"## Command start, median of {runs} interleaved rounds ({u.load()})")
    print(
        u.table(
            ["command", "median", "min", "vs python -c pass"],
            [
                [k, u.ms(u.median(v)), u.ms(min(v)), u.ratio(u.median(v), base)]
                for k, v in t.items()
            ],
        )
    )
    r = u.median(t["peri --version"]) / base
    print(
        f"\ntarget: peri --version within 1.5x of python -c pass: {r:.2f}x -> "
        f"{u.verdict(r <= 1.5)}\n"
    )


def headless(env: dict[str, str], ws: Path, runs: int) -> None:
    """`peri -p` to its answer against an instant fake server, against importing the SDK."""
    with u.fake_server([]) as url:  # an empty script: every request is answered "ok" at once
        env = {**env, "ANTHROPIC_BASE_URL": url}

        def timed(*argv: str) -> Callable[[], float]:
            return lambda: u.time_cmd(list(argv), 1, env=env, cwd=ws, warmup=0)[0]

        cases = {
            "python -c 'import anthropic'": timed(u.PY, "-c", "import anthropic"),
            "python -c 'import peri_cli.sdk'": timed(u.PY, "-c", "import peri_cli.sdk"),
            "peri -p hi (answered)": timed(u.PERI, "-p", "hi"),
        }
        t = u.interleaved(cases, runs)
    floor = u.median(t["python -c 'import anthropic'"])
    print(f"## Headless: peri -p against the SDK import, {runs} interleaved rounds ({u.load()})")
    print(
        u.table(
            ["command", "median", "min", "vs import anthropic"],
            [
                [k, u.ms(u.median(v)), u.ms(min(v)), u.ratio(u.median(v), floor)]
                for k, v in t.items()
            ],
        )
    )
    r = u.median(t["peri -p hi (answered)"]) / floor
    print(f"\ntarget: peri -p within 1.1x of import anthropic: {r:.2f}x -> {u.verdict(r <= 1.1)}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="runs of each `--version` case")
    ap.add_argument("--tui-runs", type=int, default=7, help="rounds of the TUI start cases")
    ap.add_argument(
        "--importtime",
        action="store_true",
        help="also list the heaviest imports of `peri` and of the TUI",
    )
    ap.add_argument(
        "--budget",
        action="store_true",
        help="list the modules the TUI's first frame imports, by room and package "
        "(`-X importtime`), and what it must not import",
    )
    ap.add_argument(
        "--settle",
        type=float,
        default=2.0,
        help="seconds after launch at which peak RSS is read (start-up work included)",
    )
    ap.add_argument(
        "--diagnose",
        action="store_true",
        help="add a case: the TUI with an estimate-only token counter (no tiktoken "
        "warm-up at mount), to size that cost",
    )
    ap.add_argument("--no-tui", action="store_true", help="only the command and headless cases")
    args = ap.parse_args()
    u.banner("bench/start.py — start-up")

    with u.temp_home() as (home, ws):
        env = u.bench_env(home)
        command_start(env, ws, args.runs)
        headless(env, ws, args.runs)

        if why := tui_unavailable(args.no_tui):
            print(f"TUI start: {why}")
        else:
            app_py = home.parent / "minimal_app.py"
            app_py.write_text(MINIMAL_APP)
            samples: dict[str, list[u.StartSample]] = {"minimal Textual app": [], "peri (TUI)": []}
            argv = {"minimal Textual app": [u.PY, str(app_py)], "peri (TUI)": [u.PERI]}
            if args.diagnose:
                no_warm = home.parent / "peri_no_warm.py"
                no_warm.write_text(u.NO_WARM)
                name = "peri, estimate-only counter (diagnostic)"
                samples[name] = []
                argv[name] = [u.PY, str(no_warm)]
            with u.Tmux() as tmux:
                for r in range(args.tui_runs + 1):
                    for name, got in samples.items():
                        s = u.measure_tui_start(tmux, argv[name], env, ws, settle=args.settle)
                        if r:  # round 0 warms caches (page cache, .pyc)
                            got.append(s)
            floor = [s for s in samples["minimal Textual app"] if s.ok]
            f_first = u.median([s.first_draw for s in floor])
            f_ready = u.median([s.ready for s in floor])
            rows = tui_rows(samples, f_first, f_ready)
            print(f"## TUI start under tmux (120x40), median of {args.tui_runs} interleaved rounds")
            print(
                u.table(
                    [
                        "app",
                        "first screen",
                        "vs floor",
                        "accepts input",
                        "vs floor",
                        f"peak RSS ({args.settle:g} s after launch)",
                    ],
                    rows,
                )
            )
            peri_ok = [s for s in samples["peri (TUI)"] if s.ok]
            if peri_ok and floor:
                print(target(peri_ok, f_first, f_ready))
            print()
            if args.budget:
                print(budget(env, ws, app_py))
                print()
            if args.diagnose:
                print(u.tui_phases(home.parent, env, ws, [], args.tui_runs))
                print()

        if args.importtime:
            for module in ("peri_cli.cli", "peri_cli.sdk.runtime", "peri_cli.tui.app"):
                try:
                    total, groups, single = import_profile(module)
                except subprocess.CalledProcessError as e:
                    print(f"import {module}: failed ({e.stderr.strip().splitlines()[-1]})")
                    continue
                print(f"## python -X importtime -c 'import {module}': {total:.0f} ms in all")
                print(
                    u.table(
                        ["package (self time summed)", "ms"],
                        [[k, f"{v:.1f}"] for k, v in groups[:10]],
                    )
                )
                print(
                    "heaviest modules (self): "
                    + ", ".join(f"{n} {v:.1f} ms" for n, v in single[:8])
                )
                print()


if __name__ == "__main__":
    main()
