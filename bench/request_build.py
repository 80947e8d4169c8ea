"""Per-request overhead: building a request (projection + contributions + tool specs) and turning it
into the provider's JSON body, at 100, 1,000 and 10,000 messages.

    .venv/bin/python bench/request_build.py                # ~1 minute
    .venv/bin/python bench/request_build.py --sizes 100,1000,10000,30000 --profile

The session is composed as `peri -r ID` composes it (build_runtime: real tools, permission policy,
contribution chain). Messages follow a coding pattern (prompt, tool calls with 0.2-4 KB results,
answer); a Micro ProjectionEntry cuts a fifth of the results, so the render path runs too.
"Steady" is a request during the session (projection caches warm); "first after load" is the
first request after the session file was opened. Baseline in the same run: `json.dumps` of the
same body (the serialization floor), and `dump_message` of every message (the core serializer).
Target: under 10 ms at 1,000 messages, growing linearly.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import json
import os
import pstats
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u


def make_entries(n: int, rng: random.Random, corpus: u.Corpus) -> list:
    """About n messages in turns; a Micro ProjectionEntry after them cuts a fifth of the results."""
    from peri_cli.base.messages import Message, TextPart, ToolResultPart, ToolUsePart, user_text
    from peri_cli.context.directives import TruncateResult, dump_directives
    from peri_cli.session.transcript import MessageEntry, ProjectionEntry

    entries: list = []
    results: list[tuple[str, str]] = []
    tool_n = 0
    count = 0
    while count < n:
        entries.append(MessageEntry(message=user_text(corpus.prose(rng.randint(10, 50)))))
        count += 1
        for _ in range(rng.randint(1, 4)):
            if count + 3 > n:
                break
            tool_n += 1
            use = ToolUsePart(
                id=f"toolu_{tool_n:07d}", name="Read", input={"file_path": f"src/m{tool_n % 97}.py"}
            )
            parts = [TextPart(text=corpus.prose(rng.randint(5, 25))), use]
            entries.append(MessageEntry(message=Message(role="assistant", content=parts)))
            res = ToolResultPart(
                tool_use_id=use.id, content=[TextPart(text=corpus.chunk(rng.randint(200, 4000)))]
            )
            e = MessageEntry(message=Message(role="user", content=[res]))
            entries.append(e)
            results.append((e.id, use.id))
            count += 2
        entries.append(
            MessageEntry(
                message=Message(
                    role="assistant", content=[TextPart(text=corpus.prose(rng.randint(20, 120)))]
                )
            )
        )
        count += 1
    cut = [
        TruncateResult(message_id=mid, tool_use_id=tid, head=150, tail=150)
        for mid, tid in results[: len(results) // 5]
    ]
    if cut:
        entries.append(ProjectionEntry(directives=dump_directives(cut)))
    return entries


def _timed(fn: Callable[[], object]) -> Callable[[], float]:
    def once() -> float:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    return once


def fresh_build(agent: Any) -> Any:
    """build_request with the view projected afresh: every real model call follows new entries,
    so the agent's per-append view cache must not flatter the figure."""
    agent._view_cache = None
    return agent.build_request()


def measure_phases(agent: Any, req: Any, view: list[Any], reps: int) -> dict[str, float]:
    """Median seconds of each phase; one sample of every phase per round, so noise hits all."""
    from peri_cli.base.messages import dump_message
    from peri_cli.context.contributions import RequestContext
    from peri_cli.context.projection import project
    from peri_cli.providers.anthropic import request as anth
    from peri_cli.providers.openai import request as oai

    params = anth.build_params(req)
    ctx = RequestContext(workspace=agent.policy.workspace, turn=agent.turns)
    cases = {
        "project": lambda: project(agent.session.entries),
        "contrib": lambda: agent.chain.render(ctx),
        "specs": agent.tools.specs,
        "build": lambda: fresh_build(agent),
        "conv": lambda: anth.build_params(req),
        "json": lambda: json.dumps(params, ensure_ascii=False),
        "total": lambda: json.dumps(anth.build_params(fresh_build(agent)), ensure_ascii=False),
        "oai": lambda: json.dumps(oai.build_params(fresh_build(agent)), ensure_ascii=False),
        "dump": lambda: [dump_message(x) for x in view],
    }
    samples = u.interleaved({k: _timed(fn) for k, fn in cases.items()}, reps)
    return {k: u.median(v) for k, v in samples.items()}


def reps_for(n: int) -> int:
    return max(15, min(200, 20_000 // max(1, n)))


def main() -> None:  # noqa: PLR0915
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--profile", action="store_true", help="cProfile steady builds at 1,000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    u.banner("bench/request_build.py — per-request overhead")

    from peri_cli.cli import build_parser
    from peri_cli.providers.anthropic import request as anth
    from peri_cli.sdk.runtime import build_runtime

    rows, first_rows, totals = [], [], {}
    profiles = ""
    old_cwd = Path.cwd()
    with u.temp_home() as (home, ws):
        env = u.bench_env(home)
        os.chdir(ws)
        try:
            corpus = u.Corpus(3)
            for n in sizes:
                rt = build_runtime(build_parser().parse_args([]), env)
                assert rt.session is not None
                sid = rt.session.id
                rt.session.append(*make_entries(n, random.Random(n), corpus))
                rt.close()
                rt = build_runtime(build_parser().parse_args(["-r", sid]), env)
                agent = rt.agent
                assert agent is not None

                t = time.perf_counter()
                req = agent.build_request()
                body = json.dumps(anth.build_params(req), ensure_ascii=False)
                first = time.perf_counter() - t

                view = agent.view()
                m = measure_phases(agent, req, view, reps_for(n))
                t_total, t_json = m["total"], m["json"]
                totals[n] = t_total
                rows.append(
                    [
                        f"{n:,}",
                        len(view),
                        u.mb(len(body)),
                        u.ms(m["project"]),
                        u.ms(m["contrib"]),
                        u.ms(m["specs"]),
                        u.ms(m["build"]),
                        u.ms(m["conv"]),
                        u.ms(t_json),
                        u.ms(t_total),
                        u.ratio(t_total, t_json),
                        u.ms(m["oai"]),
                        u.ms(m["dump"]),
                    ]
                )
                first_rows.append([f"{n:,}", u.ms(first)])
                if args.profile and n == 1000:
                    prof = cProfile.Profile()
                    prof.enable()
                    for _ in range(50):
                        json.dumps(anth.build_params(fresh_build(agent)), ensure_ascii=False)
                    prof.disable()
                    buf = io.StringIO()
                    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
                    profiles = buf.getvalue()
                rt.close()
        finally:
            os.chdir(old_cwd)

    print("## Steady request build (median per request)")
    print(
        u.table(
            [
                "messages",
                "in view",
                "body",
                "project",
                "contributions",
                "tool specs",
                "build_request",
                "→ Anthropic params",
                "json.dumps (floor)",
                "total (Anthropic)",
                "total vs floor",
                "total (OpenAI)",
                "dump_message ×n",
            ],
            rows,
        )
    )
    print()
    print("## First request after opening the session (one sample each; projection caches cold)")
    print(u.table(["messages", "build_request + Anthropic JSON"], first_rows))
    print()
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        slope = (totals[hi] - totals[lo]) / (hi - lo)
        print(
            f"per-message slope ({lo:,} -> {hi:,}): {slope * 1e6:.1f} µs/message; "
            f"fixed part ≈ {u.ms(max(0.0, totals[lo] - slope * lo))}"
        )
        for a, b in itertools.pairwise(sizes):
            print(f"  {a:,} -> {b:,}: time x{totals[b] / totals[a]:.1f} for messages x{b / a:.0f}")
    if 1000 in totals:
        print(
            f"target: < 10 ms at 1,000 messages: {u.ms(totals[1000])} -> "
            f"{u.verdict(totals[1000] < 0.010)}"
        )
    if profiles:
        print("\n## cProfile, 50 steady builds at 1,000 messages (by own time)")
        print(profiles)


if __name__ == "__main__":
    main()
