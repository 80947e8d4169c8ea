"""The working state after a Full compaction: what Peri knows exactly from the transcript (the task
list, the approved plan, files changed with their state as of the compaction, commands run and
what still fails, the permission mode), rendered within its budget. Pure: the caller says what
each changed file holds now (`FileState`).

The summary is written by the model and loses what it loses; this part is not guessed, so it is
kept apart from the summary, in the first message after it, each part newest first within its own
cap; the summary request is told so (`prompts/compact_summary.md`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from peri_cli.base.messages import Message, ToolResultPart, ToolUsePart
from peri_cli.context.micro import ORIGIN_WORKING_STATE
from peri_cli.context.todos import MARKS, TODO_TOOL, TodoItem
from peri_cli.context.worklog import (
    CommandRun,
    FileChange,
    WorkLog,
    still_failing,
    succeeded_latest,
)
from peri_cli.session.transcript import MessageEntry
from peri_cli.session.turns import origin_of

__all__ = [
    "ORIGIN_WORKING_STATE",
    "WorkingState",
    "budget_for",
    "state_tokens",
    "working_state_text",
]

WINDOW_SHARE = 0.05
MIN_TOKENS = 1_500
RECENT_RUNS = 8
# Each part's cap, as a share of the working state's budget (the plan at most 40%); parts that
# are empty give their share to the others.
SHARES: dict[str, float] = {
    "todos": 0.20,
    "plan": 0.40,
    "files": 0.12,
    "commands": 0.14,
    "failing": 0.12,
    "mode": 0.02,
}
PLAN_MAX_SHARE = 0.40

HEAD = (
    "Peri kept this working state from the session's record at the compaction (not a summary: it "
    "is exact as of then; check a file before you change it)."
)


@dataclass(frozen=True)
class WorkingState:
    todos: Sequence[TodoItem] | None = None
    plan: str = ""  # the approved plan, when one was approved (filled by plan mode)
    log: WorkLog = field(default_factory=lambda: WorkLog([], []))
    # What each changed file holds as of the compaction: "42 lines", "deleted", ...
    file_states: Mapping[str, str] = field(default_factory=dict)
    mode: str = "default"


def budget_for(window: int) -> int:
    """The working state's tokens: 5% of the window, and never less than 1,500."""
    return max(MIN_TOKENS, int(window * WINDOW_SHARE))


def _seconds(ms: int | None) -> str:
    if ms is None:
        return ""
    return f", {ms / 1000:.1f} s" if ms < 60_000 else f", {ms / 60_000:.1f} min"


def _run_line(r: CommandRun) -> str:
    command = r.command if len(r.command) <= 300 else r.command[:300] + " …"
    return f"- `{command}` → {r.status}{_seconds(r.duration_ms)}"


def _todos_part(todos: Sequence[TodoItem] | None) -> list[str]:
    if not todos:
        return []
    lines = [f"{MARKS[t.status]} {t.content}" for t in todos]
    active = [t for t in todos if t.status == "in_progress"]
    head = "Task list (the latest TodoWrite; [~] in progress, [x] done; keep it current):"
    now = [f"Now: {active[0].activeForm}"] if active else []
    return [head, *now, *lines]


def _files_part(files: Sequence[FileChange], states: Mapping[str, str]) -> list[str]:
    if not files:
        return []
    head = "Files this session changed (newest first; their state as of the compaction):"
    return [head, *(_file_line(f, states.get(f.path, "unknown")) for f in files)]


def _file_line(f: FileChange, state: str) -> str:
    by = f" by {f.by}" if f.by else ""
    if f.action == "deleted" and state != "deleted":
        return f"- {f.path}: deleted{by}, there again now: {state}"
    if f.action == "deleted":
        return f"- {f.path}: deleted{by}"
    return f"- {f.path}: {f.action}{by}, {state}"


def _commands_part(runs: Sequence[CommandRun]) -> list[str]:
    if not runs:
        return []
    recent = list(reversed(runs[-RECENT_RUNS:]))
    worked = [r for r in succeeded_latest(runs) if r not in recent]
    lines = ["Shell commands run (newest first; exit status, duration):"]
    lines += [_run_line(r) for r in recent]
    if worked:
        lines.append("Earlier commands that worked (the latest run of each):")
        lines += [_run_line(r) for r in worked]
    return lines


def _failing_part(runs: Sequence[CommandRun]) -> list[str]:
    failing = still_failing(runs)
    if failing is None:
        return []
    head = (
        f"Still failing (no later run of it succeeded): `{failing.command}` → "
        f"{failing.status}{_seconds(failing.duration_ms)}"
    )
    if not failing.tail:
        return [head]
    return [head, "The end of its output:", "```", *failing.tail.splitlines(), "```"]


def _fit(lines: list[str], cap: int, count: Callable[[str], int], *, keep_end: int = 0) -> str:
    """`lines` within `cap` tokens: later lines (the oldest items) are left out first, with a
    note; the last `keep_end` lines (a fence) stay."""
    text = "\n".join(lines)
    if not lines or count(text) <= cap:
        return text
    body, end = lines[: len(lines) - keep_end], lines[len(lines) - keep_end :]
    dropped = 0
    while len(body) > 1:
        body.pop()
        dropped += 1
        note = [f"({dropped} more line{'s' if dropped > 1 else ''} left out to fit.)"]
        text = "\n".join([*body, *end, *note])
        if count(text) <= cap:
            return text
    return "" if count(body[0]) > cap else body[0]


def _caps(parts: Mapping[str, list[str]], budget: int) -> dict[str, int]:
    present = {k: SHARES[k] for k, v in parts.items() if v}
    total = sum(present.values()) or 1.0
    caps = {k: int(budget * share / total) for k, share in present.items()}
    if "plan" in caps:
        caps["plan"] = min(caps["plan"], int(budget * PLAN_MAX_SHARE))
    return caps


def working_state_text(state: WorkingState, *, budget: int, count: Callable[[str], int]) -> str:
    """The working state as the model reads it, every part within its cap; "" when empty."""
    plan = state.plan.strip()
    parts: dict[str, list[str]] = {
        "todos": _todos_part(state.todos),
        "plan": ["Approved plan:", *plan.splitlines()] if plan else [],
        "files": _files_part(state.log.files, state.file_states),
        "commands": _commands_part(state.log.runs),
        "failing": _failing_part(state.log.runs),
        "mode": [f"Permission mode: {state.mode}"],
    }
    if not any(parts[k] for k in ("todos", "plan", "files", "commands", "failing")):
        return ""
    head_tokens = count(HEAD) + 10
    caps = _caps(parts, budget - head_tokens)
    blocks = []
    for key, lines in parts.items():
        if lines:
            fence = 1 if key == "failing" and lines[-1] == "```" else 0
            block = _fit(list(lines), caps[key], count, keep_end=fence)
            if block:
                blocks.append(block)
    body = "\n\n".join(blocks)
    return f"<working_state>\n{HEAD}\n\n{body}\n</working_state>"


def state_tokens(entries: Sequence[MessageEntry], count: Callable[[Message], int]) -> int:
    """What the working state takes in this view (`/context`'s line): the working-state
    entries, and the TodoWrite calls and their results."""
    total = 0
    todo_ids: set[str] = set()
    for e in entries:
        if origin_of(e) == ORIGIN_WORKING_STATE:
            total += count(e.message)
            continue
        for part in e.message.content:
            if isinstance(part, ToolUsePart) and part.name == TODO_TOOL:
                todo_ids.add(part.id)
            elif not (isinstance(part, ToolResultPart) and part.tool_use_id in todo_ids):
                continue
            total += count(Message(role=e.message.role, content=[part]))
    return total
