"""SubAgents: three children streaming at full speed in the TUI (key echo and frame times), and a
child's prompt-cache share for `general` (the parent's tools list) vs a restricted type.

    .venv/bin/python bench/subagents_stream.py                # ~2 minutes
    .venv/bin/python bench/subagents_stream.py --tokens 10000 --runs 2
    .venv/bin/python bench/subagents_stream.py --tokens 1500 --child-delay 0.01  # a real pace
    .venv/bin/python bench/subagents_stream.py --skip-tui     # the cache figures only
    .venv/bin/python bench/subagents_stream.py --pane         # the open pane's slowest frames
    .venv/bin/python bench/subagents_stream.py --profile      # ... and cProfile of its frames

Part 1 runs the real `peri` under tmux (120x40) against tests/fakeserver.py: the parent starts
three background SubAgents, each streaming a `--tokens` reply word by word, spread by the server
over `--child-seconds` (1.8 s: the full speed measured on 2026-12-01, pinned so that the figure
does not move with the machine's speed; `--child-seconds 0`: as fast as the server can). While
they stream, a probe key is typed every `--probe-every` seconds and timed until it shows in the
prompt; frame times come from the process itself (bench/_probe, as in bench/streaming.py).
Baselines in the same run: peri idle (typing only), and peri's main agent streaming one reply as
long as the three together (over the same time). A last case opens the first child's pane while
they stream (frames only: the pane has the keyboard). Target: key echo p95 and frame p95 <= 50 ms.

Part 2 runs `peri -p` against the fake server with its Anthropic prompt-cache accounting on
(`--cache`: tools -> system -> messages prefix, breakpoints, Anthropic's rules): the parent calls
`Agent` once, the child makes two requests (a Read, then its report). Figures: cache-read share
(cache reads / prompt tokens) of the child's first and second request, for `general` (same tools
list as the parent: the parent's cached prefix is shared) and `explore` (Read, Glob, Grep only).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u
from streaming import END, START, make_reply

PROBE = "Q"
JOBS = ("job one", "job two", "job three")
DONE = "ZZALLDONEZZ"


def post_script(url: str, script: list[dict[str, Any]]) -> None:
    req = urllib.request.Request(
        url + "/_script",
        data=json.dumps(script).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(req, timeout=10).read()


def children_script(
    replies: list[str], delay: float = 0.0, pace: float = 0.0
) -> list[dict[str, Any]]:
    """The parent starts three background children; each streams its reply (`delay` seconds
    before each event: a real model's pace; or the whole reply spread over `pace` seconds);
    every wake of the parent answers DONE."""
    spawn = [
        {
            "name": "Agent",
            "input": {"prompt": f"{job}: write", "description": job, "run_in_background": True},
        }
        for job in JOBS
    ]
    script: list[dict[str, Any]] = [
        {"when": "orchestrate", "tool_calls": spawn},
        {"when": "orchestrate", "text": "Three SubAgents started."},
    ]
    script += [{"when": "orchestrate", "text": DONE} for _ in JOBS]
    script += [
        {
            "when": job,
            "text": reply,
            **({"delay": delay} if delay else {}),
            **({"pace": pace} if pace and not delay else {}),
        }
        for job, reply in zip(JOBS, replies, strict=True)
    ]
    return script


def probe_echo(tmux: u.Tmux, latencies: list[float]) -> bool:
    """Type the probe key; wait until the prompt shows one more. False if it never did."""
    before = tmux.screen().text.count(PROBE)
    tmux.send(PROBE)
    sent = time.perf_counter()
    seen, _ = tmux.wait(lambda s: s.text.count(PROBE) > before, 5.0, interval=0.005)
    if seen is None:
        return False
    latencies.append(seen - sent)
    return True


def _idle(tmux: u.Tmux, latencies: list[float], seconds: float, every: float) -> int:
    """Type probe keys for `seconds`; returns how many never showed."""
    lost, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        lost += not probe_echo(tmux, latencies)
        time.sleep(every)
    return lost


def _streaming(
    tmux: u.Tmux, latencies: list[float], t_first: float, case: dict[str, Any], args: Any
) -> tuple[float, int, u.Screen | None]:
    """Probe while it streams, until `finished`; (end time, keys lost, the last screen or None
    when the process died)."""
    lost = 0
    deadline = t_first + args.max_seconds
    next_probe = time.perf_counter() + args.probe_every
    while True:
        s = tmux.screen()
        now = time.perf_counter()
        if case["finished"](s) or now > deadline:
            return now, lost, s
        if s.dead:
            return now, lost, None
        if not case.get("pane") and now >= next_probe and len(latencies) + lost < 300:
            lost += not probe_echo(tmux, latencies)
            next_probe = time.perf_counter() + args.probe_every
        else:
            time.sleep(0.01)


def open_pane(tmux: u.Tmux) -> tuple[float | None, u.Screen]:
    """Select the first child in the strip and open its pane (again if the keys came too early,
    before the strip took them); when it showed."""
    for _ in range(3):
        tmux.send("C-Down", literal=False)
        tmux.send("Enter", literal=False)
        opened, s = tmux.wait(lambda s: "Esc close" in s.text, 1, interval=0.005)
        if opened is not None or "SubAgents:" not in s.text:
            return opened, s
    return opened, s


def run_case(
    tmux: u.Tmux,
    env: dict[str, str],
    ws: Path,
    frames_file: Path,
    *,
    case: dict[str, Any],
    args: Any,
) -> dict[str, Any]:
    """One run in the pane: echo latencies (unless a pane has the keyboard) and the frames drawn
    between the start of the stream and its end."""
    frames_file.unlink(missing_ok=True)
    env = {**env, "PYTHONPATH": str(u.BENCH / "_probe"), "PERI_BENCH_FRAMES": str(frames_file)}
    if case.get("profile"):
        env["PERI_BENCH_FRAME_PROFILE"] = str(case["profile"])
        env["PERI_BENCH_SLOW"] = "0.05"  # only the frames over the target
    tmux.spawn([u.PERI, "--permission-mode", "bypass"], env, ws)
    latencies: list[float] = []
    pane_at = float("nan")
    try:
        seen, s = tmux.wait(lambda s: "Message Peri" in s.text, 60, interval=0.02)
        if seen is None:
            return {"error": u._why(s, "the prompt never appeared")}
        if case["prompt"] is None:  # idle: typing only
            t_first = time.perf_counter()
            lost = _idle(tmux, latencies, 8.0, args.probe_every)
            t_end = time.perf_counter()
        else:
            tmux.send(case["prompt"])
            tmux.send("Enter", literal=False)
            t_first, s = tmux.wait(case["started"], 60, interval=0.005)
            if t_first is None:
                return {"error": u._why(s, "the stream never started")}
            if case.get("pane"):
                opened, s = open_pane(tmux)
                if opened is None:
                    return {"error": u._why(s, "the pane never opened")}
                pane_at = opened - t_first
            t_end, lost, last = _streaming(tmux, latencies, t_first, case, args)
            if last is None:
                return {"error": "the process exited while streaming"}
            s = last
        rss = u.peak_rss_mb(s.pid) if s.pid else float("nan")
    finally:
        tmux.stop_pane()
    frames, in_gc = read_frames(frames_file, t_first, t_end)
    return {
        "seconds": t_end - t_first,
        "latencies": latencies,
        "lost": lost,
        "frames": frames,
        "gc": in_gc,
        "rss": rss,
        "pane_at": pane_at,
    }


def read_frames(
    frames_file: Path, t_first: float, t_end: float
) -> tuple[list[float], list[tuple[float, str]]]:
    """The frames drawn between the two times: their durations, and the garbage collector's
    time in each with the generations it collected (bench/_probe)."""
    frames, in_gc = [], []
    if frames_file.exists():
        for line in frames_file.read_text().splitlines():
            start, dur, gc_seconds, gens = line.split()
            if t_first - 0.05 <= float(start) <= t_end:
                frames.append(float(dur))
                in_gc.append((float(gc_seconds), gens))
    return frames, in_gc


def tui_part(args: argparse.Namespace) -> str:
    replies = [make_reply(args.tokens, seed=11 + i)[0] for i in range(len(JOBS))]
    main_reply, main_tokens, _ = make_reply(args.tokens * len(JOBS), seed=31)
    cases: dict[str, dict[str, Any]] = {
        "peri idle (typing only)": {"script": [], "prompt": None},
        f"main agent streaming one {main_tokens:,}-token reply": {
            "script": [
                {"text": main_reply, **({"pace": args.child_seconds} if args.child_seconds else {})}
            ],
            "prompt": "Write the long answer, please.",
            # paced, a frame may carry hundreds of tokens: the start may scroll by unseen
            "started": lambda s: START in s.text or "ZZP" in s.text or END in s.text,
            "finished": lambda s: END in s.text,
        },
        f"3 SubAgents streaming {args.tokens:,} tokens each (panes closed)": {
            "script": children_script(replies, args.child_delay, args.child_seconds),
            "prompt": "orchestrate three writers",
            "started": lambda s: "SubAgents: 3 running" in s.text,
            # the strip goes when none runs (the probe keys in the prompt are "typing", so the
            # reports wait for the next message instead of waking the parent)
            "finished": lambda s: "SubAgents:" not in s.text,
        },
        "3 SubAgents streaming, the first one's pane open (frames only)": {
            "script": children_script(replies, args.child_delay, args.child_seconds),
            "prompt": "orchestrate three writers",
            "started": lambda s: "SubAgents: 3 running" in s.text,
            "finished": lambda s: "SubAgent finished." in s.text,
            "pane": True,
        },
    }
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in cases}
    with u.temp_home() as (home, ws), u.fake_server([]) as url:
        env = u.bench_env(home, ANTHROPIC_BASE_URL=url)
        frames_file = home.parent / "frames.txt"
        with u.Tmux() as tmux:
            for _ in range(args.runs):
                for name, case in cases.items():
                    post_script(url, case["script"])
                    results[name].append(run_case(tmux, env, ws, frames_file, case=case, args=args))
    return tui_report(results, args)


def worst_frames(r: dict[str, Any], n: int = 8) -> str:
    """The slowest frames of a run, with the time the garbage collector took in each."""
    rows = sorted(zip(r["frames"], r["gc"], strict=True), reverse=True)[:n]
    in_gc = sum(g for g, _ in r["gc"])
    lines = [
        f"opened {u.secs(r['pane_at'])} after the stream began, {u.secs(r['seconds'])} before "
        f"the end; {len(r['frames'])} frames, p50 {u.ms(u.median(r['frames']))}, "
        f"p95 {u.ms(u.percentile(r['frames'], 95))}; in the garbage collector: {u.ms(in_gc)} "
        f"of {u.ms(sum(r['frames']))}; the slowest:"
    ]
    lines += [f"  {u.ms(d)}, of it gc {u.ms(g)} (generations {gens})" for d, (g, gens) in rows]
    return "\n".join(lines)


def profile_pane(args: argparse.Namespace, top: int = 25) -> str:
    """The pane case once, each frame of the real process under cProfile (bench/_probe) unless
    `--pane` alone asked for the frame times only."""
    import io
    import pstats

    replies = [make_reply(args.tokens, seed=11 + i)[0] for i in range(len(JOBS))]
    with u.temp_home() as (home, ws), u.fake_server([]) as url:
        env = u.bench_env(home, ANTHROPIC_BASE_URL=url)
        stats_file = home.parent / "frames.prof"
        case = {
            "prompt": "orchestrate three writers",
            "started": lambda s: "SubAgents: 3 running" in s.text,
            "finished": lambda s: "SubAgent finished." in s.text,
            "pane": True,
            "profile": stats_file if args.profile else None,
        }
        post_script(url, children_script(replies, args.child_delay, args.child_seconds))
        with u.Tmux() as tmux:
            r = run_case(tmux, env, ws, home.parent / "frames.txt", case=case, args=args)
        if "error" in r:
            return "profile failed: " + r["error"]
        if not args.profile:
            return "pane open: " + worst_frames(r)
        if not stats_file.exists():
            return "profile failed: no stats written"
        buf = io.StringIO()
        stats = pstats.Stats(str(stats_file), stream=buf)
        stats.sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats("peri_cli", 15)
        stats.print_callees(r"screen.py:\d+\(_refresh_layout\)")
    return "pane open, frames over 50 ms under cProfile: " + worst_frames(r) + "\n" + buf.getvalue()


def tui_report(results: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    rows = []
    figures: dict[str, tuple[float, float]] = {}
    for name, rs in results.items():
        good = [r for r in rs if "error" not in r]
        if not good:
            rows.append([name, "failed: " + rs[0]["error"], *[""] * 8])
            continue
        lat = [x for r in good for x in r["latencies"]]
        frames = [x for r in good for x in r["frames"]]
        lost = sum(r["lost"] for r in good)
        echo95, frame95 = u.percentile(lat, 95), u.percentile(frames, 95)
        figures[name] = (echo95, frame95)
        rows.append(
            [
                name,
                u.secs(u.median([r["seconds"] for r in good])),
                u.ms(u.median(lat)) if lat else "",
                u.ms(echo95) if lat else "",
                f"{len(lat)}{f' ({lost} lost)' if lost else ''}",
                len(frames) // max(1, len(good)),
                u.ms(u.median(frames)),
                u.ms(frame95),
                u.ms(max(frames) if frames else float("nan")),
                f"{u.median([r['rss'] for r in good]):.0f} MB",
            ]
        )
    names = list(results)
    idle, main, children, pane = names
    out = [
        f"## Three SubAgents streaming {args.tokens:,} tokens each "
        + (
            f"{args.child_delay}s apart per event "
            if args.child_delay
            else f"each over {args.child_seconds:g} s "
            if args.child_seconds
            else "at full speed "
        )
        + f"({args.runs} run(s) per case; keys and frames pooled)",
        u.table(
            [
                "",
                "stream time",
                "key echo p50",
                "key echo p95",
                "keys",
                "frames/run",
                "frame p50",
                "frame p95",
                "frame max",
                "peak RSS",
            ],
            rows,
        ),
        "",
    ]
    if children in figures:
        echo, frame = figures[children]
        for base in (idle, main):
            if base in figures:
                b_echo, b_frame = figures[base]
                out.append(
                    f"3 SubAgents vs {base}: key echo p95 {u.ratio(echo, b_echo)}, "
                    f"frame p95 {u.ratio(frame, b_frame)}"
                )
        out.append(
            f"target: key echo p95 <= 50 ms: {u.ms(echo)} -> {u.verdict(echo <= 0.050)}; "
            f"frame p95 <= 50 ms: {u.ms(frame)} -> {u.verdict(frame <= 0.050)}"
        )
    if pane in figures:
        frame = figures[pane][1]
        out.append(f"pane open: frame p95 {u.ms(frame)} -> {u.verdict(frame <= 0.050)}")
    return "\n".join(out)


# --- part 2: the child's prompt-cache share --------------------------------------------------


def cache_run(kind: str, home: Path, ws: Path) -> dict[str, Any]:
    """`peri -p` with one foreground child of type `kind`; the usage of each request."""
    sys.path.insert(0, str(u.REPO / "tests"))
    from fakeserver import FakeServer

    agent = {
        "name": "Agent",
        "input": {"prompt": "child task: read a.py", "description": "read", "subagent_type": kind},
    }
    script = [
        {"when": "parent task", "tool_calls": [agent]},
        {"when": "child task", "tool_calls": [{"name": "Read", "input": {"file_path": "a.py"}}]},
        {"when": "child task", "text": "a.py holds X = 42."},
        {"when": "parent task", "text": "The child says X = 42."},
    ]
    (ws / "a.py").write_text("X = 42\n" * 50)
    with FakeServer(script=script, cache=True) as server:
        env = u.bench_env(home, ANTHROPIC_BASE_URL=server.url)
        proc = subprocess.run(
            [u.PERI, "-p", "parent task: delegate", "--permission-mode", "bypass"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if proc.returncode != 0:
            return {"error": (proc.stderr or proc.stdout).strip()[-300:]}
        records = [r for r in server.requests if r.get("usage") and r["status"] == 200]

    def first_text(body: dict[str, Any]) -> str:
        content = body["messages"][0]["content"]
        return content if isinstance(content, str) else json.dumps(content)

    def share(usage: dict[str, int]) -> tuple[float, int]:
        read = usage.get("cache_read_input_tokens", 0)
        total = read + usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
        return (read / total if total else 0.0), total

    child = [r for r in records if "child task" in first_text(r["body"])]
    parent = [r for r in records if "parent task" in first_text(r["body"])]
    return {
        "tools": [len(r["body"].get("tools", [])) for r in child],
        "parent_tools": len(parent[0]["body"].get("tools", [])) if parent else 0,
        "child": [share(r["usage"]) for r in child],
    }


def cache_part() -> str:
    rows = []
    for kind in ("general", "explore"):
        with u.temp_home() as (home, ws):
            r = cache_run(kind, home, ws)
        if "error" in r:
            rows.append([kind, "failed: " + r["error"], "", "", ""])
            continue
        (s1, t1), (s2, t2) = r["child"][:2]
        rows.append(
            [
                f"`{kind}`",
                f"{r['tools'][0]} (parent: {r['parent_tools']})",
                f"{s1:.1%} of {t1:,}",
                f"{s2:.1%} of {t2:,}",
            ]
        )
    return "\n".join(
        [
            "## A child's prompt-cache reads (fake server, Anthropic's caching rules)",
            u.table(
                ["type", "tools in its requests", "1st request: read share", "2nd request"],
                rows,
            ),
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=20_000, help="tokens each child streams")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument(
        "--child-delay",
        type=float,
        default=0.0,
        help="seconds before each event a child streams (0: full speed; 0.01: ~100 tokens/s)",
    )
    ap.add_argument(
        "--child-seconds",
        type=float,
        default=1.8,
        help="the fake server spreads each child's reply over this many seconds (1.8: the full "
        "speed of 2026-12-01, pinned so the figure reproduces; 0: as fast as it can)",
    )
    ap.add_argument("--probe-every", type=float, default=0.1, help="seconds between probe keys")
    ap.add_argument("--max-seconds", type=float, default=90.0)
    ap.add_argument("--skip-tui", action="store_true", help="only the cache figures")
    ap.add_argument(
        "--pane", action="store_true", help="only the open pane's case: its slowest frames"
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="only the open pane's case, its frames under cProfile (layout, render, write)",
    )
    args = ap.parse_args()
    if args.profile or args.pane:
        print(profile_pane(args))
        return
    u.banner("bench/subagents_stream.py — three SubAgents streaming; a child's cache share")
    if not args.skip_tui:
        if u.tmux_available():
            print(tui_part(args))
        else:
            print("part 1 unavailable: tmux not installed")
        print()
    print(cache_part())


if __name__ == "__main__":
    main()
