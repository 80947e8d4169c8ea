"""Continuity after compaction (issue 38): does the working state reach the first request after a
Full compaction?

Generated long sessions run in process (the real Agent loop, the real Anthropic provider and the
built-in tools in `bypass` mode) against the loopback fake server (`tests/fakeserver.py`). Each
session plants one item of each kind among filler work (Reads, Edits and commands on other files):

- `task`: the task in progress in the latest TodoWrite list;
- `decision`: a decision stated in a user message;
- `edited file`: a file edited early (ten other files are touched after it);
- `worked command`: a command that failed, then worked after a fix;
- `open failure`: a failing test command never fixed (its output names the failure).

Then `/compact` (Full) is forced, one more prompt is sent, and the first request after the
compaction is searched for each item: Peri's way (summary, the user's words, re-read files, the
working state) beside "summary plus the last 5 files re-read" (the common approach, built from the
same transcript with the same scripted summary, which names none of the items: what a model's
summary would keep is not measured here). Sessions run at a 200k window and at 24k (where Micro
and automatic Full compactions happen along the way). It also prints the tokens the working state
took and what TodoWrite costs in every request (its schema and its line in the prompt).

Run: .venv/bin/python bench/continuity.py [--sessions 20] [--turns 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from _util import REPO  # noqa: F401  (puts the repository on sys.path)

from peri_cli.agent.compaction.compactor import Compactor
from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.loop import Agent
from peri_cli.base.events import Compacted
from peri_cli.base.tool import ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.context.micro import ORIGIN_WORKING_STATE
from peri_cli.context.snapshot import SnapshotInputs, base_section, build_snapshot
from peri_cli.context.tokens import TokenCounter
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.providers.anthropic.provider import AnthropicProvider
from peri_cli.session.store import SessionStore
from peri_cli.session.transcript import MessageEntry
from peri_cli.session.turns import origin_of
from peri_cli.tools import builtin_tools
from peri_cli.tools.todowrite import TodoWriteTool
from tests.fakeserver import FakeServer

KINDS = ("task", "decision", "edited file", "worked command", "open failure")
SUMMARY = "<summary>Goal: work through the modules as asked. Next: carry on.</summary>"
WINDOWS = (200_000, 24_000)
FILES = 40
COUNTER = TokenCounter()  # for the figures only: each session's agent calibrates its own


def module(n: int) -> str:
    """A code-like file of about 600 tokens."""
    body = [
        f"def handler_{n}_{k}(request): return request.get('f{k}', {k * n % 97})" for k in range(60)
    ]
    return f'"""Module {n}."""\n' + "\n".join(body) + "\n"


@dataclass
class Plan:
    """One generated session: its turns (prompt, tool calls) and its planted items."""

    seed: int
    turns: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @property
    def check(self) -> str:
        return f"test -f .ok_{self.seed} && echo CHECK-{self.seed}-OK"

    @property
    def failing(self) -> str:
        return f"echo 'FAIL-{self.seed}: test_edge_{self.seed} broke'; exit 1"


def call(name: str, **input: Any) -> dict[str, Any]:
    return {"name": name, "input": input}


def todos(seed: int, done: int) -> list[dict[str, str]]:
    names = [f"Step {k} of job {seed}" for k in range(4)] + [f"PLANT-TASK-{seed}"]
    out = []
    for k, name in enumerate(names):
        status = "completed" if k < done else "in_progress" if k == done else "pending"
        out.append({"content": name, "status": status, "activeForm": f"Doing {name}"})
    return out


def plan_for(seed: int, n_turns: int) -> Plan:
    plan = Plan(seed)
    files = [f"src/mod_{(seed * 7 + k) % FILES}.py" for k in range(FILES)]
    for t in range(n_turns):
        prompt = f"Turn {t}: carry on with job {seed}."
        calls = [call("Read", file_path=files[(3 * t + k) % FILES]) for k in range(2)]
        target = files[(3 * t + 2) % FILES]
        calls.append(call("Edit", file_path=target, old_string="(request)", new_string="(req)"))
        calls.append(call("Bash", command=f"echo step-{t}"))
        if t == 0:
            calls.insert(0, call("TodoWrite", todos=todos(seed, 0)))
        if t == 1:
            prompt = f"Decision {seed}: use httpie, not curl (DEC-{seed}). {prompt}"
            calls.append(
                call("Edit", file_path=f"src/planted_{seed}.py", old_string="x", new_string="y")
            )
        if t == 2:
            calls.append(call("Bash", command=plan.check))
            calls.append(call("Write", file_path=f".ok_{seed}", content="ok\n"))
            calls.append(call("Bash", command=plan.check))
        if t == 3:
            calls.append(call("Bash", command=plan.failing))
        if t == n_turns - 2:
            calls.append(call("TodoWrite", todos=todos(seed, 4)))
        plan.turns.append((prompt, calls))
    return plan


class Responder:
    """A tool-less request gets the summary; else the turn's next call, then a short answer."""

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("tools"):
            return {"text": SUMMARY}
        if self.pending:
            return {"tool_calls": [self.pending.pop(0)]}
        return {"text": "Done with this turn."}


def request_text(body: dict[str, Any]) -> str:
    out: list[str] = []
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for b in blocks:
            if b.get("type") == "text":
                out.append(b["text"])
            elif b.get("type") == "tool_result":
                inner = b.get("content")
                out.append(
                    inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
                )
            elif b.get("type") == "tool_use":
                out.append(json.dumps(b["input"], ensure_ascii=False))
    return "\n".join(out)


def present(plan: Plan, text: str, *, peri: bool) -> dict[str, bool]:
    s = plan.seed
    return {
        "task": (f"[~] PLANT-TASK-{s}" if peri else f"PLANT-TASK-{s}") in text,
        "decision": f"DEC-{s}" in text,
        "edited file": (f"src/planted_{s}.py: edited" if peri else f"planted_{s}.py") in text,
        "worked command": (f"`{plan.check}` → exit 0" if peri else plan.check) in text,
        "open failure": f"FAIL-{s}: test_edge_{s} broke" in text,
    }


def baseline_text(entries: list[MessageEntry], workspace: Path) -> str:
    """Summary plus the last 5 files read or changed, re-read now (the common approach)."""
    paths: list[str] = []
    for e in reversed(entries):
        for use in reversed(e.message.tool_uses):
            path = use.input.get("file_path")
            if (
                use.name in ("Read", "Edit", "Write")
                and isinstance(path, str)
                and path not in paths
            ):
                paths.append(path)
    blocks = [SUMMARY]
    for path in paths[:5]:
        file = workspace / path
        body = file.read_text() if file.is_file() else "(gone)"
        blocks.append(f'<file path="{path}">\n{body}</file>')
    return "\n\n".join(blocks)


@dataclass
class Outcome:
    peri: dict[str, bool]
    baseline: dict[str, bool]
    state_tokens: int
    compactions: int  # automatic Full compactions before the forced one


async def run_session(plan: Plan, window: int, workspace: Path) -> Outcome:
    for n in range(FILES):
        (workspace / "src").mkdir(exist_ok=True)
        (workspace / f"src/mod_{n}.py").write_text(module(n))
    (workspace / f"src/planted_{plan.seed}.py").write_text("x = 1\n")
    store = SessionStore(workspace / ".home", workspace)
    snapshot = build_snapshot(
        SnapshotInputs(workspace=workspace, today=date(2025, 1, 1), platform="linux", is_git=False)
    )
    session = store.create(snapshot)
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.add(tool)
    responder = Responder()
    compactions = 0
    with FakeServer() as server:
        server.set_responder(responder)
        agent = Agent(
            session=session,
            provider=AnthropicProvider(api_key="bench", base_url=server.url),
            model="claude-sonnet-4-5",
            tools=registry,
            policy=PermissionPolicy(mode="bypass", workspace=workspace),
            chain=ContributionChain(),
            compactor=Compactor(CompactConfig(context_window=window), counter=TokenCounter()),
        )
        for prompt, calls in plan.turns:
            responder.pending = list(calls)
            async for event in agent.run(prompt):
                compactions += isinstance(event, Compacted) and event.strategy == "full"
        before = [e for e in agent.session.entries if isinstance(e, MessageEntry)]
        async for _ in agent.compact_now():
            pass
        seen = len(server.requests)
        async for _ in agent.run("Carry on."):
            pass
        first = next(r["body"] for r in server.requests[seen:] if r["body"].get("tools"))
    kept = [e for e in session.entries if isinstance(e, MessageEntry)]
    state = [e for e in kept if origin_of(e) == ORIGIN_WORKING_STATE][-1]
    session.close()
    return Outcome(
        present(plan, request_text(first), peri=True),
        present(plan, baseline_text(before, workspace), peri=False),
        COUNTER.count_message(state.message),
        compactions,
    )


def report(window: int, outcomes: list[Outcome]) -> None:
    n = len(outcomes)
    print(f"## {window:,}-token window, {n} sessions")
    print(f"  {'kind':<16} {'Peri':>6} {'summary + 5 files':>18}")
    for kind in KINDS:
        peri = sum(o.peri[kind] for o in outcomes) / n
        base = sum(o.baseline[kind] for o in outcomes) / n
        print(f"  {kind:<16} {peri:>6.0%} {base:>18.0%}")
    tokens = [o.state_tokens for o in outcomes]
    print(
        f"  working state: median {statistics.median(tokens):,.0f} tokens, max {max(tokens):,} "
        f"({max(tokens) / window:.1%} of the window); automatic Full compactions before the "
        f"forced one: median {statistics.median(o.compactions for o in outcomes):.0f}"
    )


def todo_cost() -> str:
    spec = TodoWriteTool().spec()
    schema = COUNTER.count_json(
        {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
    )
    note = COUNTER.count_text(base_section("tools-tasks"))
    return f"TodoWrite in every request: {schema:,} tokens of tool schema + {note} of prompt line"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=12)
    args = parser.parse_args(argv)
    for window in WINDOWS:
        outcomes = []
        for seed in range(args.sessions):
            with tempfile.TemporaryDirectory(prefix="peri-bench-cont-") as tmp:
                plan = plan_for(seed, args.turns)
                outcomes.append(asyncio.run(run_session(plan, window, Path(tmp))))
        report(window, outcomes)
    print(todo_cost())
    return 0


if __name__ == "__main__":
    sys.exit(main())
