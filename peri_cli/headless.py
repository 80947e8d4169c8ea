"""`peri -p`: run the loop to the end without a screen and print in the chosen output format."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import sys
from collections.abc import AsyncIterator
from typing import IO, TYPE_CHECKING, Any, TextIO

from peri_cli.agent.host import CommandError
from peri_cli.agent.loop import Agent
from peri_cli.agent.sessionstart import run_session_start
from peri_cli.agent.subagents import ChildStateChanged, SubagentManager
from peri_cli.agent.toolround import Denial
from peri_cli.base.events import (
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
from peri_cli.base.messages import Usage, dump_message
from peri_cli.base.retry import Retrying
from peri_cli.base.textsafe import visible
from peri_cli.context.pressure import stable_prefix_share
from peri_cli.extensions.commands import parse_command
from peri_cli.extensions.skills.catalog import SkillError
from peri_cli.extensions.skills.invocation import invoke_user_skill
from peri_cli.sdk.runtime import Runtime

if TYPE_CHECKING:
    from peri_cli.mcp.manager import McpManager
    from peri_cli.mcp.status import ServerStatus

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
STDIN_CAP = 256 * 1024  # bytes of piped input added to the prompt
STDIN_WAIT = 1.0  # seconds to wait for piped input when a prompt was given as an argument


def read_piped_stdin(stream: IO[bytes] | None, *, wait: float | None) -> str | None:
    """Text piped into `peri -p`, or None (a terminal, nothing piped, or nothing within `wait`).

    A stdin that is open but never written (some CI runners) must not hang a run that has its
    prompt already: with `wait` set, input that has not started by then is not waited for."""
    if stream is None:
        return None
    try:
        if stream.isatty():
            return None
        fd = stream.fileno()
    except (OSError, ValueError):
        return None
    if wait is not None:
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return None
    chunks: list[bytes] = []
    size = 0
    while size <= STDIN_CAP:
        chunk = os.read(fd, STDIN_CAP + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    text = data[:STDIN_CAP].decode("utf-8", errors="replace")
    if size > STDIN_CAP:
        text += f"\n[piped input cut: only its first {STDIN_CAP // 1024} KiB are included]"
    return text


def combine_prompt(argument: str, piped: str | None) -> str:
    """The prompt argument followed by the piped text (either may be missing)."""
    if not piped or not piped.strip():
        return argument
    return f"{argument}\n\n{piped}" if argument.strip() else piped


def result_object(
    session_id: str,
    *,
    result: str = "",
    turns: int = 0,
    usage: Usage | None = None,
    estimated: bool = False,
    denials: list[Denial] | None = None,
    error: str | None = None,
    prefix_share: float | None = None,
) -> dict[str, Any]:
    """The `result` object of `--output-format json` (CONTRACT.md §2)."""
    usage = usage or Usage()
    counts: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
    }
    if estimated:
        counts["estimated"] = True
    out: dict[str, Any] = {
        "type": "result",
        "session_id": session_id,
        "result": result,
        "is_error": error is not None,
        "num_turns": turns,
        "usage": counts,
        "permission_denials": [
            {
                "tool_name": d.tool_name,
                "tool_use_id": d.tool_use_id,
                "tool_input": d.tool_input,
                "reason": d.reason,
            }
            for d in denials or []
        ],
    }
    out["stable_prefix_share"] = None if prefix_share is None else round(prefix_share, 4)
    if error is not None:
        out["error"] = error
    return out


def print_error(fmt: str, message: str, session_id: str = "") -> None:
    """A run that failed before it started: one line on stderr, and the result object on stdout
    for the JSON formats, so a script reading stdout learns of it too."""
    print(f"peri: error: {message}", file=sys.stderr)
    if fmt != "text":
        print(json.dumps(result_object(session_id, error=message), ensure_ascii=False))


class _Output:
    """Collects the run's outcome and prints events as the format asks."""

    def __init__(self, fmt: str, session_id: str, out: TextIO, err: TextIO) -> None:
        self.fmt, self.session_id, self.out, self.err = fmt, session_id, out, err
        self.result = ""
        self.turns = 0
        self.error: str | None = None
        self._announced: set[str] = set()  # tool_use ids whose `tool_use` line was printed
        self._inputs: dict[str, dict[str, Any]] = {}  # of the current reply's tool calls

    def line(self, obj: dict[str, Any]) -> None:
        if self.fmt == "stream-json":
            self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
            self.out.flush()

    def event(self, event: Event) -> None:
        match event:
            case AssistantMessage(message=message, usage=usage):
                self.turns += 1
                self._inputs = {u.id: dict(u.input) for u in message.tool_uses}
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
                self._announce(id, name, input)
            case ToolFinished(id=id, name=name, output=output, is_error=is_error):
                self._announce(id, name, self._inputs.get(id, {}))
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

    def child_event(self, child_id: str, event: Event) -> None:
        """A SubAgent's reply and tool calls, as lines carrying its id (stream-json only)."""
        match event:
            case AssistantMessage(message=message, usage=usage):
                self.line(
                    {
                        "type": "assistant",
                        "agent_id": child_id,
                        "message": dump_message(message),
                        "usage": usage.model_dump(),
                    }
                )
            case ToolCall(id=id, name=name, input=input):
                self.line(
                    {
                        "type": "tool_use",
                        "agent_id": child_id,
                        "id": id,
                        "name": name,
                        "input": input,
                    }
                )
            case ToolFinished(id=id, name=name, output=output, is_error=is_error):
                self.line(
                    {
                        "type": "tool_result",
                        "agent_id": child_id,
                        "tool_use_id": id,
                        "name": name,
                        "content": output,
                        "is_error": is_error,
                    }
                )
            case _:
                pass

    def _announce(self, call_id: str, name: str, tool_input: dict[str, Any]) -> None:
        """One `tool_use` line per call, before its result; refused calls get one too."""
        if call_id not in self._announced:
            self._announced.add(call_id)
            self.line({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})

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
                        "prefix_changed": event.prefix_changed,
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
        result = result_object(
            self.session_id,
            result=self.result,
            turns=self.turns,
            usage=agent.usage_total,
            estimated=agent.usage_estimated,
            denials=agent.denials,
            error=self.error,
            prefix_share=stable_prefix_share(agent.session.entries).share,
        )
        if agent.denials:
            print(f"peri: {denial_summary(agent)}", file=self.err)
        if self.fmt == "text":
            if self.result:
                self.out.write(self.result.rstrip("\n") + "\n")
            if self.error is not None:
                print(f"peri: error: {self.error}", file=self.err)
        else:
            self.out.write(json.dumps(result, ensure_ascii=False) + "\n")
        self.out.flush()
        return EXIT_FAILED if self.error is not None else EXIT_OK


def denial_summary(agent: Agent) -> str:
    """One line: how many calls were denied, in which mode, and the flag that would allow them."""
    denials = agent.denials
    names = ", ".join(dict.fromkeys(d.tool_name for d in denials))
    edits_only = all(
        agent.tools.get(d.tool_name) is not None
        and getattr(agent.tools.get(d.tool_name), "kind", "") == "write"
        and "outside the workspace" not in d.reason
        for d in denials
    )
    flag = (
        "--permission-mode accept-edits"
        if edits_only and agent.policy.mode in ("default", "plan")
        else "--permission-mode bypass"
    )
    n = len(denials)
    return (
        f"{n} tool call{'s were' if n > 1 else ' was'} denied ({names}) in permission mode "
        f"{agent.policy.mode!r}; headless runs cannot ask. To allow {'them' if n > 1 else 'it'}, "
        f"run again with {flag}."
    )


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
    async for event in agent.compact_now(argument or None):
        out.event(event)
        if isinstance(event, Compacted):
            out.result = (
                f"Compacted: {event.tokens_before} -> {event.tokens_after} tokens "
                f"({event.affected} messages summarized)."
            )
        elif isinstance(event, CompactFailed):
            out.error = f"compaction failed: {event.reason}"


async def _watch_children(manager: SubagentManager, out: _Output) -> None:
    """SubAgents' events: their questions are denied (nobody to ask), their work is streamed."""
    async for item in manager.events():
        event = item.event
        if isinstance(event, PermissionRequested):
            event.future.set_result("deny")
        elif isinstance(event, ChildStateChanged):
            out.line(
                {
                    "type": "system",
                    "subtype": "agent",
                    "agent_id": item.child_id,
                    "state": event.state,
                    "detail": event.detail,
                }
            )
        else:
            out.child_event(item.child_id, event)


async def _run_until_quiet(
    agent: Agent, manager: SubagentManager | None, prompt: str, out: _Output
) -> None:
    """The prompt's turn, then one more turn per background SubAgent report, until no SubAgent
    runs or waits and no report is unread (or --max-turns is reached)."""
    await _deny_asks(agent.run(prompt), out)
    while manager is not None and out.error is None:
        if agent.max_turns is not None and agent.turns >= agent.max_turns:
            if manager.busy():
                out.error = f"stopped after {agent.turns} model calls (--max-turns)"
            return
        if agent.report_waiting:
            await _deny_asks(agent.run(None), out)
        elif manager.busy():
            await manager.next_report()
        else:
            return


def _watch_mcp(mcp: McpManager | None, out: _Output) -> None:
    """One `{"type": "system", "subtype": "mcp", ...}` line per server state change (and one per
    server now), written on this loop whatever thread the manager reports from."""
    if mcp is None:
        return
    loop = asyncio.get_running_loop()
    last: dict[str, tuple[object, ...]] = {}

    def show(status: ServerStatus) -> None:
        key = (status.state, status.detail, status.tools, status.prompts)
        if last.get(status.name) != key:
            last[status.name] = key
            out.line({"type": "system", "subtype": "mcp", **status.to_json()})

    def listener(status: ServerStatus) -> None:
        loop.call_soon_threadsafe(show, status)  # (a closed loop raises; the manager ignores it)

    mcp.add_listener(listener)
    for status in mcp.statuses():
        show(status)


async def _expand_prompt(runtime: Runtime | None, prompt: str, out: _Output) -> str | None:
    """`/mcp__<server>__<prompt> [args]` -> the prompt's text (waiting for a server that is still
    connecting); the prompt unchanged when it names no server; None (and the error set) when the
    server cannot give it."""
    if runtime is None:
        return prompt
    try:
        expanded = await runtime.expand_mcp_prompt(prompt)
    except CommandError as e:
        out.error = visible(str(e))
        return None
    return prompt if expanded is None else expanded


async def _main(
    agent: Agent,
    prompt: str,
    out: _Output,
    manager: SubagentManager | None = None,
    runtime: Runtime | None = None,
) -> None:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    loop.add_signal_handler(signal.SIGHUP, task.cancel)
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
    _watch_mcp(runtime.mcp if runtime is not None else None, out)
    invocation = parse_command(prompt)
    try:
        if invocation is not None and invocation.command.headless:
            await _run_command(agent, invocation.command.name, invocation.argument, out)
        elif invocation is not None:
            out.error = f"/{invocation.command.name} is only available in the TUI"
        else:
            source = runtime.session_source if runtime is not None else "startup"
            for notice in await run_session_start(agent.hooks, agent.inbox, source):
                out.event(notice)
            expanded = await _expand_prompt(runtime, prompt, out)
            if expanded is None:
                return
            prompt = expanded
            watcher = asyncio.create_task(_watch_children(manager, out)) if manager else None
            try:
                await _run_until_quiet(agent, manager, prompt, out)
            finally:
                if manager is not None:  # what still runs is stopped and marked interrupted
                    await manager.stop_all()
                if watcher is not None:
                    watcher.cancel()
    except asyncio.CancelledError:
        out.error = "cancelled"


def run_headless(runtime: Runtime, prompt: str, fmt: str) -> int:
    agent = runtime.agent
    assert agent is not None and runtime.session is not None
    session_id = runtime.session.id
    try:
        if not prompt.strip() and not agent.can_continue():
            print_error(
                fmt,
                "-p needs a prompt (an argument or piped input): the session has nothing "
                "unanswered to continue",
                session_id,
            )
            return EXIT_USAGE
        if runtime.credentials_problem and parse_command(prompt) is None:
            print_error(fmt, runtime.credentials_problem, session_id)
            return EXIT_FAILED
        if parse_command(prompt) is None:  # `/skill-name args`: the skill's text is the prompt
            try:
                invocation = invoke_user_skill(runtime.skills, prompt.strip())
            except SkillError as e:
                print_error(fmt, str(e), session_id)
                return EXIT_FAILED
            if invocation is not None:
                prompt = invocation.message
                skill = invocation.skill
                agent.policy.grant_for_turn(skill.allowed_tools, skill.scope == "project")
        for warning in runtime.warnings:
            print(f"peri: warning: {warning}", file=sys.stderr)
        out = _Output(fmt, session_id, sys.stdout, sys.stderr)
        asyncio.run(_main(agent, prompt, out, runtime.subagents, runtime))
    finally:
        runtime.close()
    return out.finish(agent)
