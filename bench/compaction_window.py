"""Tokens sent per turn with and without Micro compact, and how much of it was a stable prefix.

A scripted 50-turn session (ScriptedProvider, in process, the real Read tool on generated files):
each user turn reads one large file and answers. The same session runs twice, once with compaction
off and once with the default settings on a window the uncompacted session would overflow.

Input tokens are counted with o200k_base (the estimate when tiktoken is unavailable) on exactly
what each request carries: tool schemas, system prompt and the projected messages. The stable
prefix of a request is what it shares with the request before it, in the order a provider caches
it: tool schemas, the frozen system prompt, then the leading messages that are unchanged.

Run: .venv/bin/python bench/compaction_window.py [--turns 50] [--window 64000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from peri_cli.core.compaction import CompactConfig, Compactor
from peri_cli.core.contributions import ContributionChain
from peri_cli.core.events import Compacted, TurnEnded
from peri_cli.core.loop import Agent
from peri_cli.core.messages import Usage
from peri_cli.core.policy import PermissionPolicy
from peri_cli.core.provider import ModelRequest
from peri_cli.core.session import SessionStore
from peri_cli.core.snapshot import SnapshotInputs, build_snapshot
from peri_cli.core.tokens import TokenCounter
from peri_cli.core.tools import ToolRegistry
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.tools import builtin_tools

FILE_LINES = 260


def source_file(n: int) -> str:
    """A deterministic, code-like file of about 10 KB."""
    lines = [f'"""Module {n}: generated for the compaction benchmark."""', ""]
    for k in range(FILE_LINES // 4):
        lines += [
            f"def handler_{n}_{k}(request, retries={k % 5}):",
            f"    value = request.get('field_{k}', {k * n % 97}) * {k + 1}",
            f"    return {{'id': {n * 1000 + k}, 'value': value, 'ok': value > {k}}}",
            "",
        ]
    return "\n".join(lines) + "\n"


@dataclass
class Run:
    label: str
    per_turn: list[int] = field(default_factory=list)  # input tokens of each turn's last request
    requests: list[int] = field(default_factory=list)  # input tokens of every request
    stable: list[int] = field(default_factory=list)  # stable-prefix tokens of every request
    events: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Meter:
    """Counts requests the way the benchmark reports them: uncalibrated o200k_base."""

    def __init__(self) -> None:
        self.counter = TokenCounter()

    def text(self, text: str) -> int:
        return self.counter.raw_text(text)

    def measure(self, request: ModelRequest, previous: ModelRequest | None) -> tuple[int, int]:
        tools = sum(
            self.text(t.name + t.description) + self.counter.raw_text(str(t.input_schema))
            for t in request.tools
        )
        system = self.text(request.frozen_system)
        dynamic = self.text(request.dynamic_system)
        messages = [self.counter.raw_message(m) for m in request.messages]
        total = tools + system + dynamic + sum(messages)
        if previous is None or previous.tools != request.tools:
            return total, 0
        stable = tools
        if previous.frozen_system != request.frozen_system:
            return total, stable
        stable += system
        if previous.dynamic_system != request.dynamic_system:
            return total, stable
        stable += dynamic
        for old, new, n in zip(previous.messages, request.messages, messages, strict=False):
            if old != new:
                break
            stable += n
        return total, stable


class Responder:
    """Summary requests get a summary; a fresh prompt gets a Read; a tool result an answer.

    Each reply reports the request's size as the provider would, counted with the meter, so the
    Compactor's calibration sees the same figures the benchmark prints.
    """

    def __init__(self, meter: Meter) -> None:
        self.meter = meter

    def __call__(self, request: ModelRequest) -> ScriptedReply:
        usage = Usage(input_tokens=self.meter.measure(request, None)[0], output_tokens=20)
        if not request.tools:
            return ScriptedReply(
                text="<summary>Goal: read every module. Done: the modules so far. Next: the "
                "remaining ones.</summary>",
                usage=usage,
            )
        last = request.messages[-1]
        if last.tool_results:
            return ScriptedReply(
                text="Read it; the handlers follow the usual pattern.", usage=usage
            )
        target = last.text.rsplit(" ", 1)[-1]
        return ScriptedReply(tool_calls=[ScriptedCall("Read", {"file_path": target})], usage=usage)


async def run_session(label: str, config: CompactConfig, workspace: Path, turns: int) -> Run:
    store = SessionStore(workspace / ".bench-home", workspace)
    snapshot = build_snapshot(
        SnapshotInputs(workspace=workspace, today=date(2025, 1, 1), platform="linux", is_git=False)
    )
    session = store.create(snapshot)
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.add(tool)
    meter = Meter()
    provider = ScriptedProvider([Responder(meter)] * (turns * 4))
    agent = Agent(
        session=session,
        provider=provider,
        model="claude-sonnet-4-5",
        tools=registry,
        policy=PermissionPolicy(mode="bypass", workspace=workspace),
        chain=ContributionChain(),
        compactor=Compactor(config, counter=TokenCounter()),
    )
    run = Run(label)
    start = time.perf_counter()
    previous: ModelRequest | None = None
    for n in range(turns):
        seen = len(provider.requests)
        async for event in agent.run(f"Turn {n}: read module_{n}.py"):
            if isinstance(event, Compacted):
                run.events.append(
                    f"turn {n}: {event.strategy} {event.tokens_before}->"
                    f"{event.tokens_after} ({event.affected} messages)"
                )
            elif isinstance(event, TurnEnded) and event.reason != "done":
                run.events.append(f"turn {n}: ended {event.reason}: {event.error}")
        for request in provider.requests[seen:]:
            if not request.tools:
                continue  # a Full compact's summary request is not part of the conversation
            total, stable = meter.measure(request, previous)
            run.requests.append(total)
            run.stable.append(stable)
            previous = request
        run.per_turn.append(run.requests[-1])
    run.seconds = time.perf_counter() - start
    session.close()
    return run


def report(off: Run, on: Run, window: int) -> None:
    print(f"{'turn':>4}  {'no compaction':>14}  {'Micro':>10}  {'ratio':>6}")
    for n, (a, b) in enumerate(zip(off.per_turn, on.per_turn, strict=True)):
        flag = "  > window" if a > window else ""
        print(f"{n:>4}  {a:>14,}  {b:>10,}  {b / a:>6.2f}{flag}")
    med_off = statistics.median(off.requests)
    med_on = statistics.median(on.requests)
    print()
    print(f"window: {window:,} tokens; requests per run: {len(off.requests)}")
    print(
        f"median input tokens per request: no compaction {med_off:,.0f}, Micro {med_on:,.0f}, "
        f"ratio {med_on / med_off:.2f}"
    )
    print(
        f"total input tokens: no compaction {sum(off.requests):,}, Micro {sum(on.requests):,}, "
        f"ratio {sum(on.requests) / sum(off.requests):.2f}"
    )
    print(
        f"largest request: no compaction {max(off.requests):,}, Micro {max(on.requests):,} "
        f"({max(on.requests) / window:.0%} of the window)"
    )
    for run in (off, on):
        share = sum(run.stable) / sum(run.requests)
        print(f"stable-prefix share of input ({run.label}): {share:.1%} ({run.seconds:.1f} s)")
    print(f"compaction events (Micro run): {len(on.events)}")
    for line in on.events:
        print(f"  {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--window", type=int, default=64_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="peri-bench-ws-") as tmp:
        workspace = Path(tmp)
        for n in range(args.turns):
            (workspace / f"module_{n}.py").write_text(source_file(n))
        # Each run keeps its session under the workspace, so the temporary directory holds all.
        off = asyncio.run(
            run_session("no compaction", CompactConfig(disable_compact=True), workspace, args.turns)
        )
        on = asyncio.run(
            run_session("Micro", CompactConfig(context_window=args.window), workspace, args.turns)
        )
    report(off, on, args.window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
