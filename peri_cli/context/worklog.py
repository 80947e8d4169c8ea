"""What a session did, read from its transcript: the files it created, edited or overwrote, and
the shell commands it ran with their exit status and duration. Pure; the working state
(`context/workstate.py`) renders it after a compaction.

A working-state entry carries the log it was built from (`WORK_LOG_KEY`), so a later compaction,
whose history starts at that entry, still knows what happened before the earlier one."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from peri_cli.base.messages import ToolResultPart
from peri_cli.session.transcript import MessageEntry

WORK_LOG_KEY = "work_log"  # on a working-state entry: the log it was built from
DURATIONS_KEY = "durations"  # on a tool-results entry: {tool_use_id: milliseconds the call ran}
FAIL_TAIL_LINES = 20
TAIL_LINE_CHARS = 300
KEEP_FILES = 50  # what a carried log keeps: the newest files, commands, and distinct successes
KEEP_RUNS = 20
KEEP_WORKED = 30

_EXIT = re.compile(r"^Exit code: (-?\d+)$")
_SIGNAL = re.compile(r"^Killed by signal (\S+)$")


@dataclass(frozen=True)
class FileChange:
    path: str
    action: str  # "created", "edited", "overwritten", "deleted"
    by: str = ""  # who changed it when not this agent: "SubAgent 1a2b3c4d (explore)"


@dataclass(frozen=True)
class CommandRun:
    command: str
    status: str  # "exit 0", "exit 2", "killed by SIGTERM", "timed out", "error", "background"
    ok: bool | None  # None: started in the background, outcome unknown here
    duration_ms: int | None = None
    tail: str = ""  # the last lines of a failed run's output


@dataclass
class WorkLog:
    files: list[FileChange]  # newest first, each path once
    runs: list[CommandRun]  # oldest first

    def record(self) -> dict[str, Any]:
        """The log, bounded, as a working-state entry carries it."""
        worked = succeeded_latest(self.runs)[:KEEP_WORKED]
        names = {r.command for r in worked}
        # A worked command's last failure stays too, so it keeps its place at the next one.
        fixes = {r.command: r for r in self.runs if r.ok is False and r.command in names}
        recent = self.runs[-KEEP_RUNS:]
        failing = still_failing(self.runs)
        keep = [*worked, *fixes.values(), *recent]
        kept = [r for r in self.runs if r is failing or any(r is k for k in keep)]
        return {
            "files": [asdict(f) for f in self.files[:KEEP_FILES]],
            "runs": [asdict(r) for r in kept],
        }


def _carried(raw: object) -> WorkLog:
    log = WorkLog([], [])
    if not isinstance(raw, dict):
        return log
    for f in raw.get("files") or []:
        if isinstance(f, dict) and isinstance(f.get("path"), str):
            by = f.get("by")
            action = str(f.get("action", "edited"))
            log.files.append(FileChange(f["path"], action, by if isinstance(by, str) else ""))
    for r in raw.get("runs") or []:
        if isinstance(r, dict) and isinstance(r.get("command"), str):
            ms = r.get("duration_ms")
            log.runs.append(
                CommandRun(
                    r["command"],
                    str(r.get("status", "")),
                    r.get("ok") if isinstance(r.get("ok"), bool) else None,
                    ms if isinstance(ms, int) else None,
                    str(r.get("tail", "")),
                )
            )
    return log


def _tail(text: str) -> str:
    lines = text.rstrip("\n").splitlines()[-FAIL_TAIL_LINES:]
    return "\n".join(line[:TAIL_LINE_CHARS] for line in lines)


def command_run(
    command: str, text: str, is_error: bool, background: bool, ms: int | None
) -> CommandRun:
    """One Bash call's outcome, from its result text: Bash appends `Exit code: N` or `Killed by
    signal S` as the last line when the command did not exit 0."""
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    if is_error:
        status = "timed out" if text.startswith("Command timed out") else "error"
        return CommandRun(command, status, False, ms, _tail(text))
    if background:
        return CommandRun(command, "background", None, ms)
    if m := _EXIT.match(last):
        return CommandRun(command, f"exit {m[1]}", False, ms, _tail(text))
    if m := _SIGNAL.match(last):
        return CommandRun(command, f"killed by {m[1]}", False, ms, _tail(text))
    return CommandRun(command, "exit 0", True, ms)


def _note_file(log: WorkLog, path: str, action: str, by: str = "") -> None:
    old = next((f for f in log.files if f.path == path), None)
    if old is not None:
        log.files.remove(old)
        if old.action == "created" and action != "deleted":
            action = "created"  # created this session, then edited: still a new file
    log.files.insert(0, FileChange(path, action, by))


def work_log(
    entries: Sequence[MessageEntry],
    *,
    removes: Callable[[str], Sequence[str]] | None = None,
    subagent_files: Mapping[str, Sequence[FileChange]] | None = None,
) -> WorkLog:
    """The files changed and commands run in these entries, after what an earlier working
    state carried. A call counts once it ran: its result is in, and not a refusal.

    `removes` reads which paths a shell command deletes (the shell's grammar lives above this
    room); `subagent_files` are the files each Agent call's SubAgent changed, by tool_use id."""
    log = WorkLog([], [])
    results: dict[str, ToolResultPart] = {}
    durations: dict[str, int] = {}
    timed: set[str] = set()  # results entries that record durations (older sessions do not)
    for e in entries:
        ms = (e.model_extra or {}).get(DURATIONS_KEY)
        for r in e.message.tool_results:
            results[r.tool_use_id] = r
            if isinstance(ms, dict):
                timed.add(r.tool_use_id)
                if isinstance(ms.get(r.tool_use_id), int):
                    durations[r.tool_use_id] = ms[r.tool_use_id]
    for e in entries:
        carried = (e.model_extra or {}).get(WORK_LOG_KEY)
        if carried is not None:
            earlier = _carried(carried)
            for f in reversed(earlier.files):
                _note_file(log, f.path, f.action, f.by)
            log.runs.extend(earlier.runs)
        for use in e.message.tool_uses:
            res = results.get(use.id)
            if res is None or (use.id in timed and use.id not in durations):
                continue  # never answered, or refused before it ran
            path = use.input.get("file_path")
            if use.name in ("Write", "Edit") and isinstance(path, str) and not res.is_error:
                action = "edited" if use.name == "Edit" else _write_action(res.text)
                _note_file(log, path, action)
            for change in (subagent_files or {}).get(use.id, ()):
                _note_file(log, change.path, change.action, change.by)
            command = use.input.get("command")
            if use.name == "Bash" and isinstance(command, str) and command.strip():
                background = bool(use.input.get("run_in_background"))
                run = command_run(
                    command.strip(), res.text, res.is_error, background, durations.get(use.id)
                )
                log.runs.append(run)
                for removed in removes(run.command) if removes and run.ok else ():
                    _note_file(log, removed, "deleted")
    return log


def _write_action(text: str) -> str:
    return "created" if text.startswith("Created") else "overwritten"


def succeeded_latest(runs: Sequence[CommandRun]) -> list[CommandRun]:
    """For each distinct command that succeeded, its latest successful run, newest first; the
    ones that had failed before they worked come first (what it took to make them work is
    knowledge the session paid for)."""
    failed = {r.command for r in runs if r.ok is False}
    seen: set[str] = set()
    out: list[CommandRun] = []
    for r in reversed(runs):
        if r.ok and r.command not in seen:
            seen.add(r.command)
            out.append(r)
    return [r for r in out if r.command in failed] + [r for r in out if r.command not in failed]


def still_failing(runs: Sequence[CommandRun]) -> CommandRun | None:
    """The newest failed run of a command whose latest run failed: what is still broken (a
    command that failed and then passed is not)."""
    latest: dict[str, CommandRun] = {}
    for r in runs:
        if r.ok is not None:
            latest[r.command] = r
    for r in reversed(runs):
        if r.ok is False and latest.get(r.command) is r:
            return r
    return None
