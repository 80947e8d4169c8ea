"""Resume: time to the first request ready and to the first TUI screen, and peak RSS.

Sessions of 1, 10 and 100 MB (generated: many turns, large tool results, Micro and Full
compactions).

    .venv/bin/python bench/resume.py                 # 1, 10, 100 MB; ~2-3 minutes
    .venv/bin/python bench/resume.py --sizes 1,10 --runs 3 --no-tui
    .venv/bin/python bench/resume.py --profile       # + cProfile of the 100 MB request path

"First request ready" runs in a fresh interpreter what `peri -r ID` does before its first model
call: build_runtime (settings, open + load the transcript, the agent), Agent.build_request
(projection + contributions + tool specs) and the Anthropic request body serialized to JSON; then,
separately, the loop's Compact phase before that call (`Compactor.before_request`: a pressure
check, which may load the tokenizer and count the view). "First screen" launches the real
`peri -r ID` under tmux and waits until the session's last message is on screen and a typed probe
is echoed. Baseline: the same measurements on a tiny (~10 KB) session in the same run. Targets
(100 MB): first screen < 1.5 s, peak RSS < 300 MB, cost growing with the visible tail (about the
same at every size here), not with the file.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
def rss():
    with open('/proc/self/status') as f:
        d = dict(l.split(':', 1) for l in f)
    return int(d['VmRSS'].split()[0]) / 1024, int(d['VmHWM'].split()[0]) / 1024
from peri_cli.cli import build_parser
from peri_cli.sdk.runtime import build_runtime
from peri_cli.providers.anthropic.request import build_params
t_import = time.perf_counter()
runtime = build_runtime(build_parser().parse_args(['-r', SESSION_ID]), os.environ)
t_runtime = time.perf_counter()
rss_loaded = rss()[0]
agent = runtime.agent
request = agent.build_request()
body = json.dumps(build_params(request), ensure_ascii=False)
t_request = time.perf_counter()
rss_request, hwm_request = rss()
import asyncio
async def compact_phase():
    # The loop's Compact phase before the first call: a no-op below the thresholds (these sessions
    # are), but it measures pressure, which may load the tokenizer and count the view.
    events = []
    if agent.compactor is not None:
        async for event in agent.compactor.before_request(agent):
            events.append(type(event).__name__)
    return events
compact_events = asyncio.run(compact_phase())
t_pressure = time.perf_counter()
rss_end, hwm_end = rss()
print(json.dumps({
    'import': t_import - t0, 'runtime': t_runtime - t_import, 'request': t_request - t_runtime,
    'ready': t_request - t0, 'pressure': t_pressure - t_request,
    'rss_loaded': rss_loaded, 'hwm_request': hwm_request, 'hwm_end': hwm_end,
    'messages': len(request.messages), 'body_bytes': len(body),
    'entries': len(runtime.session.entries),
    'compact_events': compact_events,
    'backend': agent.compactor.counter.backend if agent.compactor else None,
}))
runtime.close()
"""


def request_ready(env: dict[str, str], ws: Path, session_id: str) -> tuple[dict, float]:
    code = CHILD.replace("SESSION_ID", repr(session_id))
    return u.child_json(code, env=env, cwd=ws)


def profile_request(env: dict[str, str], ws: Path, session_id: str) -> str:
    """cProfile of the request path in this process (same code as the child)."""
    import os

    from peri_cli.cli import build_parser
    from peri_cli.providers.anthropic.request import build_params
    from peri_cli.sdk.runtime import build_runtime

    old = dict(os.environ)
    old_cwd = Path.cwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(ws)
    prof = cProfile.Profile()
    try:
        prof.enable()
        runtime = build_runtime(build_parser().parse_args(["-r", session_id]), os.environ)
        agent = runtime.agent
        assert agent is not None
        json.dumps(build_params(agent.build_request()))
        if agent.compactor:
            import asyncio

            async def compact_phase() -> None:
                async for _event in agent.compactor.before_request(agent):
                    pass

            asyncio.run(compact_phase())
        prof.disable()
        runtime.close()
    finally:
        os.environ.clear()
        os.environ.update(old)
        os.chdir(old_cwd)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(28)
    return buf.getvalue()


def profile_tui(env: dict[str, str], ws: Path, session: u.GenStats) -> str:
    import asyncio
    import os

    from peri_cli.cli import build_parser
    from peri_cli.sdk.runtime import build_runtime
    from peri_cli.tui.app import PeriApp
    from peri_cli.tui.widgets.assistant_message import AssistantMessage

    os.environ.update(env)
    old_cwd = Path.cwd()
    os.chdir(ws)
    prof = cProfile.Profile()

    async def go() -> float:
        t = time.perf_counter()
        prof.enable()
        runtime = build_runtime(build_parser().parse_args(["-r", session.session_id]), os.environ)
        app = PeriApp(runtime, None)
        async with app.run_test(size=(120, 40)):
            while not any(
                session.tail_marker in w.text for w in app.screen.query(AssistantMessage)
            ):
                await asyncio.sleep(0.01)
            prof.disable()
            return time.perf_counter() - t

    try:
        seconds = asyncio.run(go())
    finally:
        os.chdir(old_cwd)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(
        r"peri_cli|textual/(app|widget|_compositor|css/stylesheet)\.py", 30
    )
    return f"headless, profiled: {seconds:.2f} s\n" + buf.getvalue()


def main() -> None:  # noqa: C901, PLR0912, PLR0915
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1,10,100", help="session sizes in MB")
    ap.add_argument("--runs", type=int, default=5, help="runs of the request-ready path per size")
    ap.add_argument("--tui-runs", type=int, default=3, help="runs of the TUI first screen per size")
    ap.add_argument("--no-tui", action="store_true")
    ap.add_argument(
        "--compact-every",
        type=float,
        default=2.0,
        help="MB between generated Full compactions (the visible tail's size)",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="cProfile the largest size: the request path, and the TUI (Pilot) until "
        "the last message is mounted",
    )
    ap.add_argument(
        "--diagnose",
        action="store_true",
        help="time the TUI's start phases for the tiny and the largest session",
    )
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    u.banner("bench/resume.py — resume a long session")

    with u.temp_home() as (home, ws):
        env = u.bench_env(home)
        corpus = u.Corpus(7)
        sessions = {}
        tiny = u.generate_session(home, ws, 10_000, seed=99, corpus=corpus, tag="tiny")
        for size in sizes:
            s = u.generate_session(
                home,
                ws,
                int(size * 1e6),
                seed=int(size * 10),
                compact_every=int(args.compact_every * 1e6),
                corpus=corpus,
                tag=f"s{int(size)}",
            )
            sessions[size] = s
        # Real sessions keep a listing sidecar up to date on every append; build them the way
        # `peri sessions` rebuilds missing ones, so opening does not fall back to a full scan.
        from peri_cli.session.store import SessionStore

        SessionStore(home, ws).list()
        print(
            u.table(
                [
                    "session",
                    "file",
                    "entries",
                    "messages",
                    "turns",
                    "Full compactions",
                    "Micro entries",
                    "visible msgs",
                    "visible tail",
                    "generated in",
                ],
                [
                    [
                        f"{k:g} MB" if k else "tiny",
                        u.mb(s.bytes),
                        s.entries,
                        s.messages,
                        s.turns,
                        s.full_compactions,
                        s.micro_entries,
                        s.visible_messages,
                        u.mb(s.visible_bytes),
                        u.secs(s.seconds),
                    ]
                    for k, s in [(0, tiny), *sessions.items()]
                ],
            )
        )
        print()

        # --- first request ready (fresh interpreter per run; interleaved rounds)
        results: dict[float, list[dict]] = {k: [] for k in [0, *sizes]}
        walls: dict[float, list[float]] = {k: [] for k in [0, *sizes]}
        base_py = []
        all_sessions = {0: tiny, **sessions}
        for r in range(args.runs + 1):
            t = time.perf_counter()
            u.time_cmd([u.PY, "-c", "pass"], 1, warmup=0)
            py = time.perf_counter() - t
            for k, s in all_sessions.items():
                data, wall = request_ready(env, ws, s.session_id)
                if r:  # round 0 warms the page cache
                    results[k].append(data)
                    walls[k].append(wall)
            if r:
                base_py.append(py)
        py_med = u.median(base_py)

        def med(k: float, key: str) -> float:
            return u.median([d[key] for d in results[k]])

        rows = []
        tiny_wall = u.median(walls[0])
        for k in [0, *sizes]:
            s = all_sessions[k]
            rows.append(
                [
                    f"{k:g} MB" if k else "tiny",
                    u.ms(u.median(walls[k])),
                    ratio_txt(u.median(walls[k]), tiny_wall),
                    u.ms(med(k, "import")),
                    u.ms(med(k, "runtime")),
                    u.ms(med(k, "request")),
                    u.ms(med(k, "pressure")),
                    f"{med(k, 'hwm_request'):.0f} MB",
                    f"{med(k, 'hwm_end'):.0f} MB",
                    results[k][0]["messages"],
                ]
            )
        print(
            "## First request ready (fresh `python`, `peri -r ID` path up to the first model call)"
        )
        print(f"baseline `python -c pass`: {u.ms(py_med)} · runs per size: {args.runs}")
        print(
            u.table(
                [
                    "session",
                    "wall to request ready",
                    "vs tiny",
                    "imports",
                    "build_runtime (load)",
                    "build_request + JSON",
                    "Compact phase",
                    "peak RSS at request",
                    "peak RSS after Compact phase",
                    "msgs in request",
                ],
                rows,
            )
        )
        print()

        # cost per MB and growth (10 -> 100 MB has the same visible tail)
        if len(sizes) >= 2:
            a, b = sizes[-2], sizes[-1]
            da = u.median(walls[b]) - u.median(walls[a])
            dmb = (all_sessions[b].bytes - all_sessions[a].bytes) / 1e6
            rss_a, rss_b = med(a, "hwm_end"), med(b, "hwm_end")
            print(
                f"growth {a:g} -> {b:g} MB (same visible tail): request-ready "
                f"{u.ms(u.median(walls[a]))} -> {u.ms(u.median(walls[b]))} "
                f"({u.median(walls[b]) / u.median(walls[a]):.1f}x for "
                f"{all_sessions[b].bytes / all_sessions[a].bytes:.1f}x the file); "
                f"{da / dmb * 1000:.1f} ms and {(rss_b - rss_a) / dmb:.2f} MB peak RSS per file MB"
            )
            print()

        big = all_sessions[sizes[-1]]

        # --- TUI first screen
        if args.no_tui:
            print("TUI first screen: skipped (--no-tui)")
        elif not tui_present():
            print("TUI first screen: unavailable (peri_cli.tui.app not importable yet)")
        elif not u.tmux_available():
            print("TUI first screen: unavailable (tmux not installed)")
        else:
            cases: list[tuple[str, list[str], u.GenStats]] = [
                (f"{k:g} MB" if k else "tiny", [u.PERI, "-r", s.session_id], s)
                for k, s in all_sessions.items()
            ]
            if args.diagnose:
                no_warm = home.parent / "peri_no_warm.py"
                no_warm.write_text(u.NO_WARM)
                cases.append(
                    (
                        f"{sizes[-1]:g} MB, estimate-only counter (diagnostic)",
                        [u.PY, str(no_warm), "-r", big.session_id],
                        big,
                    )
                )
            got: dict[str, list[u.StartSample]] = {label: [] for label, _, _ in cases}
            with u.Tmux() as tmux:
                for _ in range(args.tui_runs):  # interleaved rounds: noise hits every size alike
                    for label, argv, s in cases:
                        got[label].append(
                            u.measure_tui_start(
                                tmux, argv, env, ws, marker=s.tail_marker, timeout=60, settle=3.0
                            )
                        )
            tui_rows = []
            tiny_first = float("nan")
            for label, _, _ in cases:
                good = [x for x in got[label] if x.ok]
                if not good:
                    tui_rows.append([label, "failed: " + got[label][0].error, "", "", "", ""])
                    continue
                first = u.median([x.first_draw for x in good])
                ready = u.median([x.ready for x in good])
                rss = u.median([x.peak_rss_mb for x in good])
                if label == "tiny":
                    tiny_first = first
                tui_rows.append(
                    [
                        label,
                        u.ms(first),
                        ratio_txt(first, tiny_first),
                        u.ms(ready),
                        f"{rss:.0f} MB",
                        u.verdict(first < 1.5 and rss < 300) if label == "100 MB" else "",
                    ]
                )
            print(
                "## TUI first screen (`peri -r ID` under tmux: last message visible; then a "
                "typed probe echoed)"
            )
            print(
                u.table(
                    [
                        "session",
                        "first screen",
                        "vs tiny",
                        "accepts input",
                        "peak RSS (3 s after launch)",
                        "target (100 MB: <1.5 s, <300 MB)",
                    ],
                    tui_rows,
                )
            )
            print()

        if args.diagnose and tui_present() and u.tmux_available():
            for k in (0, sizes[-1]):
                s = all_sessions[k]
                print(
                    u.tui_phases(
                        home.parent,
                        env,
                        ws,
                        ["-r", s.session_id],
                        args.tui_runs,
                        title=f"TUI resume phases, {u.mb(s.bytes)} session",
                    )
                )
                print()
        if args.profile:
            print(f"## cProfile: request-ready path, {u.mb(big.bytes)} (cumulative)")
            print(profile_request(env, ws, big.session_id))
            if tui_present():
                print(
                    f"## cProfile: TUI resume (Pilot, headless) of {u.mb(big.bytes)} until the "
                    "last message is mounted (cumulative)"
                )
                print(profile_tui(env, ws, big))


def ratio_txt(value: float, base: float) -> str:
    return u.ratio(value, base)


def tui_present() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("peri_cli.tui.app") is not None
    except ImportError:
        return False


if __name__ == "__main__":
    main()
