"""Cost of long sessions with and without compaction, through a fake server that caches prompts.

Three scripted session shapes run in process (the real Agent loop, the real Anthropic provider and
Read tool) against the loopback fake server with its Anthropic prompt-cache accounting on
(`tests/fakeserver.py`: tools -> system -> messages prefix, `cache_control` breakpoints, a
20-block lookback, 1,024-token minimum):

- `24 turns`: 24 user turns, each 4 Reads of ~1.2k-token files one after another, 24k window;
- `50 turns`: the same for 50 turns;
- `single turn`: one prompt, then 40 Reads of ~2k-token files, 30k window;
- `long turn`: one prompt, then 100 Reads of ~2k-token files, 30k window (issue 24: no Full).

Each shape runs twice: compaction off (the window ignored: the baseline) and the default settings.
Cost-weighted input sums, over every request (Full's summary requests included), uncached input +
1.25 x cache writes + 0.1 x cache reads, as Anthropic bills them; the ratio compares the two runs.
The stable-prefix share is cache reads / all input over every request after the first. The
bound is the issue's cost model for the best "keep the newest 3 results" policy.

Run: .venv/bin/python bench/compaction_window.py [--only single]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from _util import REPO  # noqa: F401  (puts the repository on sys.path)

from peri_cli.agent.compaction.compactor import Compactor
from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.loop import Agent
from peri_cli.base.events import Compacted, TurnEnded
from peri_cli.base.tool import ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.context.snapshot import SnapshotInputs, build_snapshot
from peri_cli.context.tokens import TokenCounter
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.providers.anthropic.provider import AnthropicProvider
from peri_cli.session.store import SessionStore
from peri_cli.tools import builtin_tools
from tests.fakeserver import FakeServer

FACT = "The release codename is TANGERINE-42."
SUMMARY = (
    "<summary>Goal: read the modules one by one and report on them. Done: the modules so far. "
    "Next: the remaining ones.</summary>"
)


@dataclass(frozen=True)
class Shape:
    name: str
    turns: int
    reads: int  # per turn
    file_tokens: int  # about, as the fake server counts (JSON characters / 4)
    window: int
    bound: float  # the cost model: best "keep the newest 3 results" policy


SHAPES = {
    "24": Shape("24 turns x 4 Reads", 24, 4, 1200, 24_000, 0.42),
    "50": Shape("50 turns x 4 Reads", 50, 4, 1200, 24_000, 0.31),
    "single": Shape("single turn, 40 Reads", 1, 40, 2000, 30_000, 0.72),
    # cost_model(100): 0.44 (and cost_model(40) gives the 0.72)
    "long": Shape("long turn, 100 Reads", 1, 100, 2000, 30_000, 0.44),
}
AIMS = {"24": (0.35, 0.90), "50": (0.30, 0.90), "single": (0.75, None), "long": (0.75, None)}


def cost_model(calls: int, whole: int = 1906, fixed: int = 3663, stub: int = 190) -> float:
    """The issue's cost model for one turn of `calls` results: the best "keep the newest 3
    results, project older ones to `stub` tokens in batches" policy, over every batch size,
    against no compaction. Each projection rewrites the cache from the first changed message
    (writes 1.25x), the rest is read (0.1x); the window is ignored. Sizes are server tokens."""

    def cost(batch: int | None) -> float:
        done, prev, total = 0, None, 0.0
        for k in range(calls + 1):
            first = None
            if batch is not None and max(0, k - 3) - done >= batch:
                first, done = done, k - 3
            sizes = [stub if i < done else whole for i in range(k)]
            if prev is None:
                total += (fixed + sum(sizes)) * 1.25
            else:
                kept = fixed + sum(prev[: len(prev) if first is None else first])
                total += (fixed + sum(sizes) - kept) * 1.25 + kept * 0.1
            prev = sizes
        return total

    return min(cost(b) for b in range(1, calls + 1)) / cost(None)


def source_file(n: int, tokens: int) -> str:
    """A deterministic, code-like file whose Read result is about `tokens` server tokens."""
    lines = [f'"""Module {n}: generated for the compaction benchmark."""']
    k = 0
    # Read adds a line-number column; JSON escapes tabs and newlines: ~4.6 characters per token.
    while sum(len(line) + 9 for line in lines) < tokens * 3.6:
        lines.append(f"def handler_{n}_{k}(request): return request.get('f{k}', {k * n % 97})")
        k += 1
    return "\n".join(lines) + "\n"


class Responder:
    """Replies by request: a summary to a tool-less request, else the turn's next Read, then a
    short answer."""

    def __init__(self) -> None:
        self.pending: list[str] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("tools"):
            return {"text": SUMMARY}
        if self.pending:
            return {"tool_calls": [{"name": "Read", "input": {"file_path": self.pending.pop(0)}}]}
        return {"text": "Read them; the handlers follow the usual pattern."}


@dataclass
class Run:
    label: str
    usages: list[dict[str, int]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    fact_kept: bool = True
    seconds: float = 0.0

    @property
    def cost(self) -> float:
        return sum(
            u["input_tokens"]
            + 1.25 * u["cache_creation_input_tokens"]
            + 0.1 * u["cache_read_input_tokens"]
            for u in self.usages
        )

    @property
    def stable_share(self) -> float:
        later = self.usages[1:]
        reads = sum(u["cache_read_input_tokens"] for u in later)
        everything = sum(
            u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
            for u in later
        )
        return reads / everything if everything else 0.0

    def count(self, strategy: str) -> int:
        return sum(e.startswith(strategy) for e in self.events)


async def run_shape(shape: Shape, config: CompactConfig, workspace: Path, label: str) -> Run:
    run = Run(label)
    store = SessionStore(workspace / f".home-{label}", workspace)
    snapshot = build_snapshot(
        SnapshotInputs(workspace=workspace, today=date(2025, 1, 1), platform="linux", is_git=False)
    )
    session = store.create(snapshot)
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.add(tool)
    responder = Responder()
    with FakeServer(cache=True) as server:
        server.set_responder(responder)
        agent = Agent(
            session=session,
            provider=AnthropicProvider(api_key="bench", base_url=server.url),
            model="claude-sonnet-4-5",
            tools=registry,
            policy=PermissionPolicy(mode="bypass", workspace=workspace),
            chain=ContributionChain(),
            compactor=Compactor(config, counter=TokenCounter()),
        )
        start = time.perf_counter()
        n_file = 0
        for t in range(shape.turns):
            names = [f"module_{n_file + i}.py" for i in range(shape.reads)]
            n_file += shape.reads
            responder.pending = list(names)
            prompt = f"Turn {t}: read {', '.join(names)} one by one and report."
            if t == 0:
                prompt = f"{FACT} Keep it in mind. {prompt}"
            async for event in agent.run(prompt):
                if isinstance(event, Compacted):
                    run.events.append(
                        f"{event.strategy} turn {t} request {len(server.requests)}: "
                        f"{event.tokens_before}->{event.tokens_after}, prefix changed "
                        f"{getattr(event, 'prefix_changed', None)}"
                    )
                elif isinstance(event, TurnEnded) and event.reason != "done":
                    run.events.append(f"ended turn {t}: {event.reason}: {event.error}")
        run.seconds = time.perf_counter() - start
        calls = [r for r in server.requests if r["path"] == "/v1/messages" and r["status"] == 200]
        run.usages = [r["usage"] for r in calls]
        run.sizes = [sum(r["usage"].values()) - r["usage"]["output_tokens"] for r in calls]
        last = [r["body"] for r in calls if r["body"].get("tools")][-1]
        run.fact_kept = "TANGERINE-42" in str(last["messages"])
    session.close()
    return run


def report(key: str, shape: Shape, off: Run, on: Run) -> None:
    ratio = on.cost / off.cost
    cost_aim, share_aim = AIMS[key]
    print(f"## {shape.name}, {shape.window:,}-token window")
    print(
        f"  requests: {len(off.usages)} without compaction, {len(on.usages)} with "
        f"({on.count('micro')} Micro, {on.count('full')} Full)"
    )
    print(
        f"  cost-weighted input: {off.cost:,.0f} -> {on.cost:,.0f}  ratio {ratio:.2f}x "
        f"(model bound {shape.bound:.2f}x, aim <= {cost_aim:.2f}x)"
    )
    aim = f", aim >= {share_aim:.0%}" if share_aim else ""
    print(f"  stable-prefix share: {off.stable_share:.1%} without, {on.stable_share:.1%} with{aim}")
    print(
        f"  largest request: {max(on.sizes):,} tokens ({max(on.sizes) / shape.window:.0%} of the "
        f"window; {max(off.sizes):,} without); first-message fact in the last request: "
        f"{'yes' if on.fact_kept else 'NO'}; {on.seconds:.1f} s"
    )
    for line in on.events:
        if not line.startswith("micro"):
            print(f"    {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", choices=sorted(SHAPES), action="append")
    parser.add_argument("--events", action="store_true", help="list every compaction")
    args = parser.parse_args(argv)
    for key in args.only or list(SHAPES):
        shape = SHAPES[key]
        with tempfile.TemporaryDirectory(prefix="peri-bench-ws-") as tmp:
            workspace = Path(tmp)
            for n in range(shape.turns * shape.reads):
                (workspace / f"module_{n}.py").write_text(source_file(n, shape.file_tokens))
            off = asyncio.run(
                run_shape(shape, CompactConfig(disable_compact=True), workspace, "off")
            )
            on = asyncio.run(
                run_shape(shape, CompactConfig(context_window=shape.window), workspace, "on")
            )
        report(key, shape, off, on)
        if args.events:
            for line in on.events:
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
