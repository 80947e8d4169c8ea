"""`peri -p`: run the loop to the end without a screen and print in the chosen output format."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any, TextIO

from peri_cli.core.commands import parse_command
from peri_cli.core.events import (
    AssistantMessage,
    Compacted,
    CompactFailed,
    CompactWarning,
    Event,
    Notice,
    PermissionRequested,
    ToolCall,
    ToolFinished,
    TurnEnded,
)
from peri_cli.core.loop import Agent
from peri_cli.core.messages import dump_message
from peri_cli.core.retry import Retrying
from peri_cli.runtime import Runtime

EXIT_OK, EXIT_FAILED = 0, 1


class _Output:
    """Collects the run's outcome and prints events as the format asks."""

    def __init__(self, fmt: str, session_id: str, out: TextIO, err: TextIO) -> None:
        self.fmt, self.session_id, self.out, self.err = fmt, session_id, out, err
        self.result = ""
        self.turns = 0
        self.error: str | None = None

    def line(self, obj: dict[str, Any]) -> None:
        if self.fmt == "stream-json":
            self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
            self.out.flush()

    def event(self, event: Event) -> None:
        match event:
            case AssistantMessage(message=message, usage=usage):
                self.turns += 1
                if message.text:
                    self.result = message.text
                self.line(
                    {
                        "type": "assistant",
                        "session_id": self.session_id,
                        "message": dump_message(message),
                        "usage": usage.model_dump(),
                    }
                )
            case ToolCall(id=id, name=name, input=input):
                self.line({"type": "tool_use", "id": id, "name": name, "input": input})
            case ToolFinished(id=id, name=name, output=output, is_error=is_error):
                self.line(
                    {
                        "type": "tool_result",
                        "tool_use_id": id,
                        "name": name,
                        "content": output,
                        "is_error": is_error,
                    }
                )
            case Compacted() | CompactFailed() | CompactWarning():
                self.compact(event)
            case Retrying(attempt=attempt, delay=delay, reason=reason):
                self.line(
                    {
                        "type": "system",
                        "subtype": "retry",
                        "attempt": attempt,
                        "delay": delay,
                        "reason": reason,
                    }
                )
            case Notice(text=text, level=level):
                self.line({"type": "system", "subtype": "notice", "level": level, "text": text})
                if self.fmt != "stream-json" and level != "info":
                    print(f"peri: {text}", file=self.err)
            case TurnEnded(reason=reason, error=error) if reason != "done":
                self.error = error or reason
            case _:
                pass

    def compact(self, event: Compacted | CompactFailed | CompactWarning) -> None:
        match event:
            case Compacted(strategy=s, tokens_before=b, tokens_after=a, affected=n, detail=d):
                self.line(
                    {
                        "type": "compact",
                        "strategy": s,
                        "tokens_before": b,
                        "tokens_after": a,
                        "affected": n,
                        "detail": d,
                    }
                )
            case CompactFailed(reason=reason):
                self.line({"type": "compact", "strategy": "failed", "error": reason})
            case CompactWarning(pressure=p, threshold=t):
                self.line(
                    {
                        "type": "compact",
                        "strategy": "warning",
                        "pressure": round(p, 4),
                        "threshold": t,
                    }
                )

    def finish(self, agent: Agent) -> int:
        usage = agent.usage_total
        result = {
            "type": "result",
            "session_id": self.session_id,
            "result": self.result,
            "is_error": self.error is not None,
            "num_turns": self.turns,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            },
        }
        if self.error is not None:
            result["error"] = self.error
        if self.fmt == "text":
            if self.result:
                self.out.write(self.result.rstrip("\n") + "\n")
            if self.error is not None:
                print(f"peri: error: {self.error}", file=self.err)
        else:
            self.out.write(json.dumps(result, ensure_ascii=False) + "\n")
        self.out.flush()
        return EXIT_FAILED if self.error is not None else EXIT_OK


async def _deny_asks(events: AsyncIterator[Event], out: _Output) -> None:
    """Headless cannot ask: every question is answered from the mode, i.e. denied."""
    async for event in events:
        if isinstance(event, PermissionRequested):
            event.future.set_result("deny")
        out.event(event)


async def _run_command(agent: Agent, name: str, argument: str, out: _Output) -> None:
    if name == "clear":
        agent.session.clear()
        out.result = "Cleared the visible history; the session keeps its frozen prompt."
        out.line({"type": "system", "subtype": "clear", "session_id": agent.session.id})
        return
    if agent.compactor is None:
        out.error = "compaction is not available in this build"
        return
    async for event in agent.compactor.compact_now(agent, argument or None):
        out.event(event)
        if isinstance(event, Compacted):
            out.result = (
                f"Compacted: {event.tokens_before} -> {event.tokens_after} tokens "
                f"({event.affected} messages summarized)."
            )
        elif isinstance(event, CompactFailed):
            out.error = f"compaction failed: {event.reason}"


async def _main(agent: Agent, prompt: str, out: _Output) -> None:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    out.line(
        {
            "type": "system",
            "subtype": "init",
            "session_id": agent.session.id,
            "model": agent.model,
            "provider": agent.provider.name,
            "tools": sorted(agent.tools.direct),
            "permission_mode": agent.policy.mode,
        }
    )
    invocation = parse_command(prompt)
    try:
        if invocation is not None and invocation.command.headless:
            await _run_command(agent, invocation.command.name, invocation.argument, out)
        elif invocation is not None:
            out.error = f"/{invocation.command.name} is only available in the TUI"
        else:
            await _deny_asks(agent.run(prompt), out)
    except asyncio.CancelledError:
        out.error = "cancelled"


def run_headless(runtime: Runtime, prompt: str, fmt: str) -> int:
    agent = runtime.agent
    assert agent is not None and runtime.session is not None
    if not prompt.strip() and len(agent.view()) == 0:
        print("peri: error: -p needs a prompt", file=sys.stderr)
        return 2
    if runtime.credentials_problem and parse_command(prompt) is None:
        print(f"peri: error: {runtime.credentials_problem}", file=sys.stderr)
        return EXIT_FAILED
    for warning in runtime.warnings:
        print(f"peri: warning: {warning}", file=sys.stderr)
    out = _Output(fmt, runtime.session.id, sys.stdout, sys.stderr)
    try:
        asyncio.run(_main(agent, prompt, out))
    finally:
        runtime.close()
    return out.finish(agent)
