"""Async hooks (`async`, `asyncRewake`): they run beside the loop, which never waits for them.

When one ends, what it has for the model waits in the agent's inbox: an async hook's JSON
`systemMessage` and `additionalContext` for the next turn; an `asyncRewake` hook that exits 2
wakes the agent (as a background SubAgent's report does) with its `rewakeMessage` and its stderr
(its stdout when stderr is empty), and its `rewakeSummary` is shown to the user. A rewake hook
that keeps waking the agent stops waking it after `MAX_WAKES` times in a row until the user
speaks. What went wrong (a failure, a timeout) is one line for the user (`take_notes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from peri_cli.base.textsafe import scrub_surrogates, visible
from peri_cli.extensions.hookanswers import MAX_TEXT_CHARS, HookRun, interpret
from peri_cli.extensions.hookrun import run_hook
from peri_cli.extensions.hooks import Hook, HookEvent

HOOK_WAKE_HEAD = "[Background hook "  # how an inbox item that wakes the agent begins
MAX_WAKES = 5  # wakes in a row without the user speaking; later output waits for them
_SUMMARY_CHARS = 300


class BackgroundHooks:
    """The session's running async hooks, and where what they leave goes: `inbox` (the main
    agent's, set when it is built) and `notes` (lines for the user)."""

    def __init__(self) -> None:
        self.inbox: list[str] = []
        self.notes: list[str] = []
        self.wakes = 0  # since the user last spoke
        self._tasks: set[asyncio.Task[None]] = set()
        self._done = asyncio.Event()

    def start(
        self,
        event: HookEvent,
        hook: Hook,
        stdin: bytes,
        *,
        cwd: Path,
        env: Mapping[str, str],
    ) -> None:
        """Run `hook` in the background (its process ends with `stop_all` or its timeout)."""
        task = asyncio.get_running_loop().create_task(self._run(event, hook, stdin, cwd, env))
        self._tasks.add(task)
        task.add_done_callback(self._ended)

    def busy(self) -> bool:
        return bool(self._tasks)

    async def next_done(self) -> None:
        """Until a background hook has ended since the last call."""
        await self._done.wait()
        self._done.clear()

    async def stop_all(self) -> None:
        """End every background hook (on exit, or when a headless run ends early)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def user_spoke(self) -> None:
        self.wakes = 0

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._done.set()

    async def _run(
        self, event: HookEvent, hook: Hook, stdin: bytes, cwd: Path, env: Mapping[str, str]
    ) -> None:
        run = await run_hook(hook, stdin, cwd=cwd, env=env)
        with contextlib.suppress(Exception):  # what a hook printed never ends the session
            self._finished(event, run)

    def _finished(self, event: HookEvent, run: HookRun) -> None:
        hook = run.hook
        if run.exit_code == 2 and hook.rewake:
            self._wake(run)
        elif run.exit_code == 0:
            if text := _for_next_turn(run.stdout):
                self.inbox.append(f"[Output of the background {hook.label()}]\n{text}")
        elif run.exit_code == 2:
            first = run.stderr.strip().splitlines()[:1]
            why = f": {first[0]}" if first else ""
            self.notes.append(_line(f"{hook.label()} exited 2 (it runs async: no block){why}"))
        else:  # could not start, timed out, failed: as a hook in line reports it
            self.notes.extend(interpret(event, [run]).messages)

    def _wake(self, run: HookRun) -> None:
        hook = run.hook
        output = _cut(run.stderr.strip() or run.stdout.strip())
        body = "\n\n".join(part for part in (hook.rewake_message, output) if part)
        summary = _summary(run.stdout) or hook.rewake_summary
        summary = _line(summary or f"The {hook.label()} has something for the agent")
        if self.wakes >= MAX_WAKES:
            self.inbox.append(f"[Output of the background {hook.label()}]\n{body}")
            self.notes.append(
                _line(
                    f"The {hook.label()} woke the agent {MAX_WAKES} times in a row; its output "
                    "waits for your next message"
                )
            )
            return
        self.wakes += 1
        self.inbox.append(f"{HOOK_WAKE_HEAD}{hook.label()} exited 2.]\n\n{body}")
        self.notes.append(summary)


def _json_object(stdout: str) -> dict[str, Any] | None:
    """The first line of stdout that is a JSON object (Claude Code reads that one)."""
    for line in stdout.splitlines():
        if line.lstrip().startswith("{"):
            try:
                data = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return None
            return data if isinstance(data, dict) else None
    return None


def _for_next_turn(stdout: str) -> str:
    """An async hook's `systemMessage` and `additionalContext`: context for the next turn."""
    text = stdout.strip()
    data: Any = None
    if text.startswith("{"):
        with contextlib.suppress(json.JSONDecodeError, RecursionError):
            data = json.loads(text)
    if not isinstance(data, dict):
        return ""
    specific = data.get("hookSpecificOutput")
    extra = specific.get("additionalContext") if isinstance(specific, dict) else None
    parts = [v for v in (data.get("systemMessage"), extra) if isinstance(v, str) and v.strip()]
    return _cut("\n".join(p.strip() for p in parts))


def _summary(stdout: str) -> str:
    """A per-run `rewakeSummary` from the hook's JSON line, overriding its configured one."""
    data = _json_object(stdout)
    value = data.get("rewakeSummary") if data is not None else None
    return value.strip() if isinstance(value, str) else ""


def _cut(text: str) -> str:
    text = scrub_surrogates(text)
    if len(text) > MAX_TEXT_CHARS:
        return text[:MAX_TEXT_CHARS] + f"\n[cut: {len(text) - MAX_TEXT_CHARS} more characters]"
    return text


def _line(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > _SUMMARY_CHARS:
        flat = flat[: _SUMMARY_CHARS - 3] + "..."
    return visible(flat)
