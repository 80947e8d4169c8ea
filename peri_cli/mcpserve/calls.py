"""One tool call run to its end: an ordinary Peri session (new or resumed) through the door, its
progress reported as it goes, its result as the text and the structured content a client reads.
A call that is cancelled (the client went away) stops its run and every process of it."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from peri_cli.sdk import (
    AssistantEvent,
    CanUseTool,
    PeriClient,
    PeriError,
    PeriOptions,
    ResultEvent,
    ToolUseEvent,
)
from peri_cli.sdk.runtime import RunSpec

Progress = Callable[[str], Awaitable[None]]  # one line on what the run is doing


@dataclass(frozen=True)
class Call:
    """What one call runs, within the bounds already checked."""

    prompt: str
    workspace: Path
    mode: str
    model: str | None = None
    max_turns: int | None = None
    resume: str | None = None


@dataclass(frozen=True)
class Outcome:
    text: str  # the final answer, or what went wrong
    structured: dict[str, Any]
    is_error: bool

    @property
    def session_id(self) -> str:
        return str(self.structured.get("session_id") or "")


def spec_of(call: Call) -> RunSpec:
    """The run: the call's folder, the server's environment, every settings file (a workspace's
    own loosen Peri only when the trust store trusts it: no --trust-workspace here)."""
    return RunSpec(
        workspace=call.workspace,
        env=dict(os.environ),
        model=call.model,
        permission_mode=call.mode,
        max_turns=call.max_turns,
        trust_workspace=False,
        resume=call.resume,
    )


async def run_call(call: Call, can_use_tool: CanUseTool | None, progress: Progress) -> Outcome:
    client = PeriClient(PeriOptions(can_use_tool=can_use_tool), spec=spec_of(call))
    try:
        try:
            await client.connect()
            await client.send(call.prompt)
        except PeriError as e:
            return failed(str(e), e.session_id or _session_of(client))
        result = await _drain(client, progress)
        return _outcome(result, client.warnings, call.mode)
    finally:
        with anyio.CancelScope(shield=True):  # a cancelled call still stops what it started
            await client.close()


async def _drain(client: PeriClient, progress: Progress) -> ResultEvent:
    async for event in client.events():
        if isinstance(event, ToolUseEvent):
            who = f"{event.agent_id}: " if event.agent_id else ""
            await progress(f"{who}{event.name}")
        elif isinstance(event, AssistantEvent) and event.agent_id is None and event.text:
            await progress("replied")
        elif isinstance(event, ResultEvent):
            return event
    raise PeriError("the run ended without a result")


def _session_of(client: PeriClient) -> str:
    runtime = client.runtime
    return runtime.session.id if runtime is not None and runtime.session is not None else ""


def _outcome(result: ResultEvent, warnings: list[str], mode: str) -> Outcome:
    structured = {
        "session_id": result.session_id,
        "result": result.result,
        "is_error": result.is_error,
        "num_turns": result.num_turns,
        "usage": result.usage,
        "permission_mode": mode,
        "permission_denials": result.permission_denials,
        "warnings": warnings,
    }
    if result.error is not None:
        structured["error"] = result.error
    text = result.result if not result.is_error else (result.error or result.result)
    if result.permission_denials:
        names = ", ".join(dict.fromkeys(str(d.get("tool_name")) for d in result.permission_denials))
        n = len(result.permission_denials)
        text += (
            f"\n\n[{n} tool call{'s were' if n > 1 else ' was'} denied ({names}) in permission "
            f"mode {mode!r}]"
        )
    return Outcome(text or "", structured, result.is_error)


def failed(message: str, session_id: str = "") -> Outcome:
    """A call that could not run (refused by the bounds, or Peri could not start)."""
    structured = {"session_id": session_id, "result": "", "is_error": True, "error": message}
    return Outcome(message, structured, True)
