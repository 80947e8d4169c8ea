"""Shared set-up for the TUI tests: a real Runtime with the scripted provider injected, fixed
session files for deterministic snapshots, and a poll-until helper (no sleeps)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from peri_cli.base.messages import Message, TextPart, ToolResultPart, ToolUsePart, Usage
from peri_cli.base.settings import Settings
from peri_cli.permissions.asking import Mode
from peri_cli.providers.scripted import ReplySource, ScriptedProvider
from peri_cli.sdk.runtime import Runtime
from peri_cli.session.store import SessionStore
from peri_cli.session.transcript import Entry, Header, MessageEntry, Snapshot
from peri_cli.session.transcript_file import TranscriptWriter
from peri_cli.tui.app import PeriApp

FIXED_NOW = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC
FIXED_SYSTEM = (
    "You are Peri, a coding agent working in the user's repository through tools. "
    "Read before you edit, keep changes small, run the tests, and say what you changed.\n\n"
    + "Prefer the project's own conventions over your habits. "
    * 12
    + "\n\n# Environment\n- Workspace: /work/demo\n- Platform: Linux\n- Git repository: yes\n\n"
    "# Project guide\nThe project's own instructions; follow them.\n\n"
    + "Run the tests with `pytest -q`; keep functions short and typed. "
    * 20
)
MODEL = "claude-sonnet-4-5"


def make_runtime(
    tmp_path: Path,
    replies: Sequence[ReplySource] = (),
    *,
    mode: Mode = "default",
    new_session: bool = True,
    builtin_names: frozenset[str] | None = None,
) -> Runtime:
    workspace = tmp_path / "ws"
    home = tmp_path / "home"
    workspace.mkdir(exist_ok=True)
    runtime = Runtime(
        workspace=workspace,
        peri_home=home,
        env={"HOME": str(tmp_path)},
        settings=Settings(),
        store=SessionStore(home, workspace),
        provider_name="anthropic",
        model=MODEL,
        mode=mode,
        max_turns=None,
        builtin_names=builtin_names,
    )
    runtime._provider = ScriptedProvider(list(replies))
    if new_session:
        runtime.start_new()
    return runtime


def iso(offset: float) -> str:
    """A fixed timestamp `offset` seconds before FIXED_NOW."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(FIXED_NOW - offset, UTC).isoformat(timespec="milliseconds")


def write_session(
    store: SessionStore,
    session_id: str,
    messages: list[Message],
    *,
    age: float = 3600,
    parent: str | None = None,
    guide_files: list[str] | None = None,
    usage: Usage | None = None,
) -> str:
    """A session file with fixed ids and times (no sidecar: the store rebuilds it from the file)."""
    from peri_cli.session.transcript import ParentRef

    store.root.mkdir(parents=True, exist_ok=True)
    header = Header(
        id=f"{session_id}-h",
        ts=iso(age + 60),
        session_id=session_id,
        workspace=str(store.workspace),
        snapshot=Snapshot(system=FIXED_SYSTEM, guide_files=guide_files or []),
        parent=ParentRef(session_id=parent) if parent else None,
    )
    entries: list[Entry] = [header]
    for i, message in enumerate(messages):
        extra: dict[str, Any] = {}
        if message.role == "assistant" and usage is not None:
            extra = {"usage": usage, "model": MODEL, "cache_read_share": usage.cache_read_share}
        entries.append(
            MessageEntry(id=f"{session_id}-{i:04d}", ts=iso(age - i), message=message, **extra)
        )
    writer = TranscriptWriter(store.path_of(session_id))
    writer.append(*entries)
    writer.close()
    return session_id


def user(text: str) -> Message:
    return Message(role="user", content=[TextPart(text=text)])


def assistant(text: str, *tool_uses: ToolUsePart) -> Message:
    parts: list[Any] = [TextPart(text=text)] if text else []
    return Message(role="assistant", content=[*parts, *tool_uses])


def results(*pairs: tuple[str, str]) -> Message:
    return Message(
        role="user",
        content=[ToolResultPart(tool_use_id=i, content=[TextPart(text=t)]) for i, t in pairs],
    )


async def until(
    pilot: Any, condition: Callable[[], object], timeout: float = 15.0, what: str = ""
) -> None:
    """Let the app run until `condition()` is true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)


def screen_text(app: PeriApp) -> str:
    """Every cell the terminal would be sent, as text (segments joined line by line)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def texts(app: PeriApp, widget_type: type) -> list[str]:
    return [getattr(w, "text", "") for w in app.query(widget_type)]


class GatedProvider:
    """Wraps the scripted provider and holds each reply after `hold_after` stream events until
    the test opens the gate, so a test can look at a turn half-way through."""

    name = "scripted"

    def __init__(self, inner: ScriptedProvider, hold_after: int = 3) -> None:
        self.inner = inner
        self.hold_after = hold_after
        self.gate = asyncio.Event()
        self.held = asyncio.Event()

    @property
    def requests(self) -> list[Any]:
        return self.inner.requests

    async def stream(self, request: Any) -> Any:
        count = 0
        async for event in self.inner.stream(request):
            if count == self.hold_after and not self.gate.is_set():
                self.held.set()
                await self.gate.wait()
            count += 1
            yield event


async def send(pilot: Any, text: str, *, wait: bool = True) -> None:
    """Put `text` in the prompt and press Enter (typing it key by key is covered elsewhere and
    costs ~40 ms a key); with `wait`, let the turn or command finish."""
    app = pilot.app
    app.prompt_area.input.insert(text)
    await pilot.press("enter")
    if wait:
        await until(pilot, lambda: not app.busy and not app.queue, what=f"{text!r} to finish")
