"""Streaming: the TUI receiving a 20,000-token reply from the fake server at full speed — tokens per
second rendered, keypress-to-echo latency while streaming, and frame times.

    .venv/bin/python bench/streaming.py               # ~2 minutes
    .venv/bin/python bench/streaming.py --tokens 50000 --runs 3

Runs the real `peri "<prompt>"` under tmux (120x40) against tests/fakeserver.py, which streams the
reply word by word with no delay. While the reply streams, a probe key is typed every 200 ms and
timed until it shows in the prompt. Frame times come from the process itself: bench/_probe is put
on PYTHONPATH, and its sitecustomize times every Textual screen update (layout + compositor +
terminal write). Baselines in the same run: the raw stream (Peri's Anthropic provider reading the
same reply from the same server, no UI), and a minimal Textual app streaming the same deltas into a
bare Markdown widget (Textual's MarkdownStream, what AssistantMessage uses) with an Input, measured
exactly like Peri. Target: no frame over 50 ms at p95.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u

START, END, PROBE = "ZZSTARTZZ", "ZZENDZZ", "Q"
# The rule Peri's AssistantMessage carries (tui/widgets/assistant_message.py), on the floor's
# Markdown: an order-dependent selector makes Textual restyle every child on each mount.
LAST_CHILD_RULE = "Markdown > MarkdownBlock:last-child { margin-bottom: 0; }"
PART_RE = u.re.compile(r"ZZP(\d+)ZZ")

FLOOR_APP = """
import asyncio, os, sys
from textual.app import App
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown
from peri_cli.base.messages import user_text
from peri_cli.base.provider import ModelRequest, TextDelta
from peri_cli.providers.anthropic.provider import AnthropicProvider

class Floor(App):
    AUTO_FOCUS = "Input"
    CSS = os.environ.get("FLOOR_EXTRA_CSS", "")
    def compose(self):
        with VerticalScroll(id="log"):
            yield Markdown(id="md")
        yield Input(placeholder="floor")
    async def on_mount(self):
        self.query_one("#log").anchor()
        self.run_worker(self.stream())
    async def stream(self):
        provider = AnthropicProvider(api_key="bench", base_url=os.environ["ANTHROPIC_BASE_URL"])
        request = ModelRequest(model="m", frozen_system="", dynamic_system="",
                               messages=[user_text("go")])
        md = self.query_one("#md", Markdown)
        stream = Markdown.get_stream(md)
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                await stream.write(event.text)
        await stream.stop()

Floor().run()
"""


def make_reply(target_tokens: int, seed: int = 11) -> tuple[str, int, dict[int, int]]:
    """Markdown prose (headings, lists, inline and fenced code) of about target_tokens tokens.

    Every ~1,000 tokens a heading carries a progress marker ZZP<k>ZZ; returned with the tokens
    before it, so a run stopped early still knows how much was rendered."""
    from peri_cli.context.tokens import TokenCounter

    counter = TokenCounter()
    rng = random.Random(seed)
    corpus = u.Corpus(seed)
    blocks = [f"{START} Here is the long answer you asked for."]
    tokens = counter.raw_text(blocks[0])
    progress: dict[int, int] = {}
    while tokens < target_tokens:
        x = rng.random()
        if tokens >= (len(progress) + 1) * 1000:
            progress[len(progress) + 1] = tokens
            block = f"## Part {len(progress)} ZZP{len(progress)}ZZ"
        elif x < 0.08:
            block = "## " + corpus.prose(rng.randint(2, 6)).rstrip(".")
        elif x < 0.20:
            block = "\n".join(
                "- " + corpus.prose(rng.randint(4, 14)) for _ in range(rng.randint(2, 6))
            )
        elif x < 0.30:
            block = "```python\n" + corpus.chunk(rng.randint(150, 700)).rstrip("\n") + "\n```"
        else:
            words = corpus.prose(rng.randint(30, 110)).split()
            for _ in range(rng.randint(0, 3)):
                i = rng.randrange(len(words))
                words[i] = f"`{words[i]}`"
            block = " ".join(words)
        block = block.replace("Q", "q")
        blocks.append(block)
        tokens += counter.raw_text(block) + 1
    blocks.append(f"That is all. {END}")
    text = "\n\n".join(blocks)
    return text, counter.raw_text(text), progress


def reset_script(url: str, reply: str) -> None:
    data = json.dumps([{"text": reply}]).encode()
    req = urllib.request.Request(
        url + "/_script", data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(req, timeout=10).read()


def raw_stream(url: str) -> tuple[float, int]:
    """Seconds from the first to the last delta, and deltas, through Peri's Anthropic provider."""
    from peri_cli.base.messages import user_text
    from peri_cli.base.provider import ModelRequest, TextDelta
    from peri_cli.providers.anthropic.provider import AnthropicProvider

    async def go() -> tuple[float, int]:
        provider = AnthropicProvider(api_key="bench", base_url=url)
        request = ModelRequest(
            model="m", frozen_system="", dynamic_system="", messages=[user_text("go")]
        )
        first = None
        n = 0
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                n += 1
                if first is None:
                    first = time.perf_counter()
        assert first is not None
        return time.perf_counter() - first, n

    return asyncio.run(go())


def run_tui(
    tmux: u.Tmux,
    argv: list[str],
    env: dict[str, str],
    ws: Path,
    frames_file: Path,
    *,
    probe_every: float,
    max_seconds: float,
    n_tokens: int,
    progress: dict[int, int],
) -> dict:
    """One streamed reply in the pane: render window, echo latencies, frames inside the window.

    Stops after `max_seconds` of streaming; the rendered share then comes from the progress
    markers on screen."""
    frames_file.unlink(missing_ok=True)
    env = {**env, "PYTHONPATH": str(u.BENCH / "_probe"), "PERI_BENCH_FRAMES": str(frames_file)}
    tmux.spawn(argv, env, ws)
    try:
        # (batched per frame, the start may scroll by between two captures)
        seen, s = tmux.wait(
            lambda s: START in s.text or "ZZP" in s.text or END in s.text, 60, interval=0.01
        )
        if seen is None:
            return {"error": u._why(s, "the reply never appeared")}
        t_first = seen
        latencies: list[float] = []
        lost = 0
        t_end = None
        rendered = 0
        deadline = t_first + max_seconds
        next_probe = time.perf_counter() + probe_every
        while True:
            s = tmux.screen()
            now = time.perf_counter()
            parts = [int(k) for k in PART_RE.findall(s.text)]
            if parts:
                rendered = max(rendered, progress.get(max(parts), 0))
            if END in s.text:
                t_end, rendered = now, n_tokens
                break
            if s.dead:
                return {"error": u._why(s, "process exited while streaming")}
            if now > deadline:
                t_end = now
                break
            if now >= next_probe and len(latencies) + lost < 150:
                before = s.text.count(PROBE)
                tmux.send(PROBE)
                sent = time.perf_counter()
                echoed, _ = tmux.wait(
                    lambda x, b=before: x.text.count(PROBE) > b, 5.0, interval=0.01
                )
                if echoed is None:
                    lost += 1
                else:
                    latencies.append(echoed - sent)
                next_probe = time.perf_counter() + probe_every
            else:
                time.sleep(0.05)
        rss = u.peak_rss_mb(s.pid) if s.pid else float("nan")
    finally:
        tmux.stop_pane()
    frames = []
    if frames_file.exists():
        for line in frames_file.read_text().splitlines():
            start, dur = line.split()[:2]
            if t_first - 0.05 <= float(start) <= t_end:
                frames.append(float(dur))
    return {
        "seconds": t_end - t_first,
        "rendered": rendered,
        "complete": rendered == n_tokens,
        "latencies": latencies,
        "lost": lost,
        "frames": frames,
        "rss": rss,
    }


def profile_peri(url: str, reply: str, env: dict[str, str], ws: Path, top: int = 30) -> str:
    """cProfile of PeriApp streaming the reply headless (Pilot), cumulative and own time."""
    import cProfile
    import io
    import os
    import pstats

    from peri_cli.cli import build_parser
    from peri_cli.sdk.runtime import build_runtime
    from peri_cli.tui.app import PeriApp
    from peri_cli.tui.widgets.assistant_message import AssistantMessage

    os.environ.update(env)
    os.chdir(ws)
    reset_script(url, reply)
    prof = cProfile.Profile()

    async def go() -> float:
        runtime = build_runtime(build_parser().parse_args(["go"]), os.environ)
        app = PeriApp(runtime, "go")
        async with app.run_test(size=(120, 40)):
            t = time.perf_counter()
            prof.enable()
            while not any(END in m.text for m in app.screen.query(AssistantMessage)):
                await asyncio.sleep(0.05)
            prof.disable()
            return time.perf_counter() - t

    seconds = asyncio.run(go())
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(15)
    stats.print_callers(r"stylesheet.py:\d+\(update_nodes\)|widget.py:\d+\(update_styles\)")
    return f"headless streaming took {seconds:.1f} s\n" + buf.getvalue()


def report(results: dict[str, list[dict]], raw: list[float], n_tokens: int, runs: int) -> str:
    """The results table (medians over runs; frames and key latencies pooled) and the verdict."""
    raw_s = u.median(raw)
    raw_rate = n_tokens / raw_s
    rows = [
        [
            "raw stream (provider, no UI)",
            f"{raw_rate:,.0f}",
            "1.00x",
            u.secs(raw_s),
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
        ]
    ]
    verdicts = {}
    for name, rs in results.items():
        good = [r for r in rs if "error" not in r]
        if not good:
            rows.append([name, "failed: " + rs[0]["error"]] + [""] * 10)
            continue
        rate = u.median([r["rendered"] / r["seconds"] for r in good])
        secs = u.median([r["seconds"] for r in good])
        done = u.median([r["rendered"] for r in good])
        lat = [x for r in good for x in r["latencies"]]
        frames = [x for r in good for x in r["frames"]]
        lost = sum(r["lost"] for r in good)
        p95 = u.percentile(frames, 95)
        verdicts[name] = p95
        rows.append(
            [
                name,
                f"{rate:,.0f}",
                u.ratio(rate, raw_rate),
                u.secs(secs) + ("" if done == n_tokens else f" (stopped at {done:,.0f} tokens)"),
                u.ms(u.median(lat)),
                u.ms(u.percentile(lat, 95)),
                f"{len(lat)}{f' ({lost} lost)' if lost else ''}",
                len(frames) // max(1, len(good)),
                u.ms(u.median(frames)),
                u.ms(p95),
                u.ms(max(frames) if frames else float("nan")),
                f"{u.median([r['rss'] for r in good]):.0f} MB",
            ]
        )
    out = [
        f"## {n_tokens:,}-token reply at full speed ({runs} TUI run(s) per app; raw: "
        f"median of {len(raw)}; frames and keypresses pooled)",
        u.table(
            [
                "",
                "tokens/s rendered",
                "vs raw",
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
    ]
    if "peri (TUI)" in verdicts:
        p95 = verdicts["peri (TUI)"]
        out.append(f"\ntarget: frame time p95 <= 50 ms: {u.ms(p95)} -> {u.verdict(p95 <= 0.050)}")
        if "minimal Textual app (floor)" in verdicts:
            floor = verdicts["minimal Textual app (floor)"]
            out.append(f"peri frame p95 vs floor: {u.ratio(p95, floor)}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=1, help="TUI runs per app (the raw stream: 3+)")
    ap.add_argument("--probe-every", type=float, default=1.0, help="seconds between probe keys")
    ap.add_argument(
        "--max-seconds",
        type=float,
        default=120.0,
        help="stop a TUI run after this much streaming (keeps the script < 5 min)",
    )
    ap.add_argument(
        "--diagnose",
        action="store_true",
        help="add a case: the floor app plus the `MarkdownBlock:last-child` rule that Peri's "
        "AssistantMessage has (an order-dependent rule restyles every block on each mount)",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile PeriApp streaming a 3,000-token reply headless (Pilot)",
    )
    args = ap.parse_args()
    u.banner("bench/streaming.py — streaming a long reply")

    import importlib.util

    if importlib.util.find_spec("peri_cli.tui.app") is None:
        print("unavailable: peri_cli.tui.app not importable yet")
        return
    if not u.tmux_available():
        print("unavailable: tmux not installed")
        return

    reply, n_tokens, progress = make_reply(args.tokens)
    words = len(u.re.findall(r"\s*\S+\s*|\s+", reply))
    print(
        f"reply: {n_tokens:,} tokens (o200k), {len(reply):,} chars, {words:,} streamed deltas; "
        f"a probe key every {args.probe_every:g} s; runs stop after {args.max_seconds:g} s\n"
    )

    with u.temp_home() as (home, ws), u.fake_server([{"text": reply}]) as url:
        env = u.bench_env(home, ANTHROPIC_BASE_URL=url)
        floor_py = home.parent / "floor_app.py"
        floor_py.write_text(FLOOR_APP)
        frames_file = home.parent / "frames.txt"
        raw: list[float] = []
        argv = {
            "minimal Textual app (floor)": [u.PY, str(floor_py)],
            "peri (TUI)": [u.PERI, "Write the long answer, please."],
        }
        envs = {name: env for name in argv}
        if args.diagnose:
            name = "floor + `MarkdownBlock:last-child` rule (diagnostic)"
            argv[name] = [u.PY, str(floor_py)]
            envs[name] = {**env, "FLOOR_EXTRA_CSS": LAST_CHILD_RULE}
        results: dict[str, list[dict]] = {name: [] for name in argv}
        with u.Tmux() as tmux:
            for _ in range(max(3, args.runs)):
                reset_script(url, reply)
                raw.append(raw_stream(url)[0])
            for _ in range(args.runs):
                for name, a in argv.items():
                    reset_script(url, reply)
                    results[name].append(
                        run_tui(
                            tmux,
                            a,
                            envs[name],
                            ws,
                            frames_file,
                            probe_every=args.probe_every,
                            max_seconds=args.max_seconds,
                            n_tokens=n_tokens,
                            progress=progress,
                        )
                    )
        print(report(results, raw, n_tokens, args.runs))
        if args.profile:
            small, _, _ = make_reply(3000)
            print("\n## cProfile: PeriApp streaming a 3,000-token reply headless (Pilot)")
            print(profile_peri(url, small, env, ws))


if __name__ == "__main__":
    main()
