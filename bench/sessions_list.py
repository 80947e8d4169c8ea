"""Sessions list: `peri sessions` in a workspace with 2,000 sessions.

    .venv/bin/python bench/sessions_list.py            # ~1 minute
    .venv/bin/python bench/sessions_list.py --sessions 10000 --runs 5

Sessions are generated with the real entry types (2-12 turns each, small tool results). The first
listing finds no `.meta.json` sidecars and rebuilds them from the transcripts ("cold", e.g. after
sessions were copied from another machine); later listings read only the sidecars ("warm", the
normal case). Baselines in the same rounds: `python -c pass` and `peri --version`. Target: warm
`peri sessions` under 0.5 s.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util as u

IN_PROCESS = r"""
import json, os, time
from pathlib import Path
t0 = time.perf_counter()
from peri_cli.session.store import SessionStore
from peri_cli.base.settings import peri_home_from_env
t1 = time.perf_counter()
infos = SessionStore(peri_home_from_env(os.environ), Path.cwd()).list()
t2 = time.perf_counter()
print(json.dumps({'import': t1 - t0, 'list': t2 - t1, 'n': len(infos)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cold-runs", type=int, default=3)
    args = ap.parse_args()
    u.banner("bench/sessions_list.py — `peri sessions`")

    with u.temp_home() as (home, ws):
        env = u.bench_env(home)
        rng = random.Random(5)
        corpus = u.Corpus(5)
        snapshot = u.make_snapshot(ws)
        total = sum(
            u.generate_small_session(home, ws, rng=rng, corpus=corpus, snapshot=snapshot)
            for _ in range(args.sessions)
        )
        from peri_cli.session.store import SessionStore

        root = SessionStore(home, ws).root
        print(f"{args.sessions} sessions, {u.mb(total)} of transcripts in {root}\n")

        def drop_sidecars() -> None:
            for p in root.glob("*.meta.json"):
                p.unlink()

        cold = []
        for _ in range(args.cold_runs):
            drop_sidecars()
            cold += u.time_cmd([u.PERI, "sessions"], 1, env=env, cwd=ws, warmup=0)
        n_meta = len(list(root.glob("*.meta.json")))

        cases = {
            "python -c pass": [u.PY, "-c", "pass"],
            "peri --version": [u.PERI, "--version"],
            "peri sessions": [u.PERI, "sessions"],
            "peri sessions --json": [u.PERI, "sessions", "--json"],
        }
        t = u.interleaved(
            {
                k: (lambda a=a: u.time_cmd(a, 1, env=env, cwd=ws, warmup=0)[0])
                for k, a in cases.items()
            },
            args.runs,
        )
        py, ver = u.median(t["python -c pass"]), u.median(t["peri --version"])
        rows = [
            [
                k,
                u.ms(u.median(v)),
                u.ms(min(v)),
                u.ratio(u.median(v), py),
                u.ratio(u.median(v), ver),
            ]
            for k, v in t.items()
        ]
        rows.append(
            [
                f"peri sessions, cold (no sidecars; {args.cold_runs} runs)",
                u.ms(u.median(cold)),
                u.ms(min(cold)),
                u.ratio(u.median(cold), py),
                u.ratio(u.median(cold), ver),
            ]
        )
        print(u.table(["command", "median", "min", "vs python -c pass", "vs peri --version"], rows))
        warm = u.median(t["peri sessions"])
        print(
            f"\ntarget: warm `peri sessions` < 0.5 s: {u.ms(warm)} -> {u.verdict(warm < 0.5)}"
            f"   (sidecars rebuilt by the cold run: {n_meta}/{args.sessions})"
        )

        splits = [u.child_json(IN_PROCESS, env=env, cwd=ws)[0] for _ in range(5)]
        print(
            f"in-process split (warm): imports {u.ms(u.median([s['import'] for s in splits]))}, "
            f"SessionStore.list() {u.ms(u.median([s['list'] for s in splits]))} "
            f"for {splits[0]['n']} sessions"
        )


if __name__ == "__main__":
    main()
