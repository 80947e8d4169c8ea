"""The working state a Full compaction keeps: built from the history it excludes (`context/
workstate.py`), each changed file's state as of now, as one transcript entry. A resumed or forked
session reads that entry as written; nothing is looked at again."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peri_cli.base.messages import user_text
from peri_cli.base.safe_read import SafeReadError, read_head
from peri_cli.context.plan_mode import PLAN_KEY, approved_plan
from peri_cli.context.todos import TODOS_KEY, dump_todos, latest_todos
from peri_cli.context.worklog import WORK_LOG_KEY, FileChange, work_log
from peri_cli.context.workstate import (
    ORIGIN_WORKING_STATE,
    WorkingState,
    budget_for,
    working_state_text,
)
from peri_cli.permissions.shell_removes import removed_paths
from peri_cli.session.store import AGENTS_DIR
from peri_cli.session.transcript import MessageEntry
from peri_cli.session.transcript_file import TranscriptError, load

if TYPE_CHECKING:
    from peri_cli.agent.compaction.port import CompactionContext

STATE_READ_BYTES = 8 << 20  # a file larger than this is told by its size


def file_state(path: Path) -> str:
    """What a changed file holds now, in a few words: its lines, or that it is gone."""
    if not path.exists() and not path.is_symlink():
        return "deleted"
    try:
        data, clipped = read_head(path, STATE_READ_BYTES)
    except SafeReadError:
        return "not a readable file now"
    if b"\0" in data[:8192]:
        return f"binary, {len(data):,} bytes" + (" or more" if clipped else "")
    lines = data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    more = " or more" if clipped else ""
    return f"{lines:,} line{'s' if lines != 1 else ''}{more}"


def subagent_files(
    session_dir: Path, entries: Sequence[MessageEntry]
) -> dict[str, list[FileChange]]:
    """What each SubAgent started in these entries changed, read from its own transcript, by the
    id of the Agent call that started it (its changes join the log where that call stands)."""
    calls = {u.id for e in entries for u in e.message.tool_uses if u.name == "Agent"}
    folder = session_dir / AGENTS_DIR
    found: dict[str, list[FileChange]] = {}
    for path in sorted(folder.glob("*.jsonl")) if calls and folder.is_dir() else []:
        try:
            loaded = load(path)  # each child's transcript read once
        except (TranscriptError, OSError):
            continue
        ref = loaded.header.agent
        if ref is None or ref.tool_use_id not in calls:
            continue
        own = [e for e in loaded.entries if isinstance(e, MessageEntry)]
        by = f"SubAgent {loaded.header.session_id[:8]} ({ref.type})"
        files = work_log(own, removes=removed_paths).files
        found[ref.tool_use_id] = [FileChange(f.path, f.action, by) for f in reversed(files)]
    return found


def working_state_entry(
    agent: CompactionContext,
    excluded: Sequence[MessageEntry],
    *,
    window: int,
    count: Callable[[str], int],
) -> MessageEntry | None:
    """The entry that carries the working state (its text, and the task list, approved plan and
    log it was built from, for the next compaction); None when there is nothing to keep."""
    todos = latest_todos(excluded)
    plan = approved_plan(excluded) or ""
    log = work_log(
        excluded, removes=removed_paths, subagent_files=subagent_files(agent.session.dir, excluded)
    )
    states = {f.path: file_state(agent.tool_ctx.resolve(f.path)) for f in log.files}
    state = WorkingState(
        todos=todos, plan=plan, log=log, file_states=states, mode=str(agent.policy.mode)
    )
    text = working_state_text(state, budget=budget_for(window), count=count)
    if not text:
        return None
    fields: dict[str, Any] = {
        "message": user_text(text),
        "origin": ORIGIN_WORKING_STATE,
        WORK_LOG_KEY: log.record(),
    }
    if todos is not None:
        fields[TODOS_KEY] = dump_todos(todos)
    if plan:
        fields[PLAN_KEY] = plan
    return MessageEntry.model_validate(fields)
