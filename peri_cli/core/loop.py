"""The agent loop: Receive -> Compact -> Reason -> ToolUse, yielding typed events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from peri_cli.core.contributions import ContributionChain, RequestContext
from peri_cli.core.events import (
    AssistantMessage,
    Event,
    PermissionAnswer,
    PermissionRequested,
    ToolCall,
    ToolFinished,
    TurnEnded,
    TurnStarted,
)
from peri_cli.core.messages import (
    Message,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    Usage,
    user_text,
)
from peri_cli.core.permissions import PermissionPolicy
from peri_cli.core.projection import project
from peri_cli.core.provider import (
    RAW_INPUT_KEY,
    MessageCompleted,
    ModelRequest,
    Provider,
    ProviderError,
)
from peri_cli.core.retry import stream_with_retries
from peri_cli.core.session import Session
from peri_cli.core.tools import ToolContext, ToolError, ToolOutput, ToolRegistry, parse_params
from peri_cli.core.transcript import MessageEntry


class CompactHook(Protocol):
    """Runs in the Compact phase before every model call (the compaction module fills it)."""

    def before_request(self, agent: Agent) -> AsyncIterator[Event]: ...

    def compact_now(self, agent: Agent, focus: str | None) -> AsyncIterator[Event]:
        """`/compact [focus]`: a Full compact now, whatever the pressure."""
        ...


@dataclass
class _Planned:
    use: ToolUsePart
    output: ToolOutput | None = None  # set when decided without running (error, denial)


class Agent:
    def __init__(
        self,
        *,
        session: Session,
        provider: Provider,
        model: str,
        tools: ToolRegistry,
        policy: PermissionPolicy,
        chain: ContributionChain,
        compactor: CompactHook | None = None,
        max_turns: int | None = None,
        max_tokens: int = 8192,
    ) -> None:
        self.session = session
        self.provider = provider
        self.model = model
        self.tools = tools
        self.policy = policy
        self.chain = chain
        self.compactor = compactor
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.usage_total = Usage()
        self.last_usage: Usage | None = None
        self.turns = 0  # model calls in this process
        self._view_cache: tuple[tuple[int, int], list[Message]] | None = None
        self.tool_ctx = ToolContext(workspace=policy.workspace, session_dir=session.dir)

    def view(self) -> list[Message]:
        """The model's view, projected again only when entries were appended since the last call
        (the Compact phase and the request that follows it share one projection)."""
        entries = self.session.entries
        if self._view_cache is None or self._view_cache[0] != (id(entries), len(entries)):
            self._view_cache = ((id(entries), len(entries)), project(entries))
        return list(self._view_cache[1])

    def build_request(self, *, tools: bool = True) -> ModelRequest:
        dynamic = self.chain.render(
            RequestContext(workspace=self.policy.workspace, turn=self.turns)
        )
        return ModelRequest(
            model=self.model,
            frozen_system=self.session.snapshot.system,
            dynamic_system=dynamic,
            messages=self.view(),
            tools=self.tools.specs() if tools else [],
            max_tokens=self.max_tokens,
        )

    async def run(self, prompt: str | None = None) -> AsyncIterator[Event]:
        """Receive a prompt (None or empty means "keep going") and loop until the reply is final."""
        if prompt:
            self.session.append(MessageEntry(message=user_text(prompt)))
        calls = 0
        while True:
            if self.max_turns is not None and calls >= self.max_turns:
                yield TurnEnded("max_turns", f"stopped after {calls} model calls (--max-turns)")
                return
            stopped = False
            async for event in self._compact():
                yield event
                stopped = stopped or isinstance(event, TurnEnded)
            if stopped:
                return
            calls += 1
            self.turns += 1
            yield TurnStarted(calls)
            reply: list[MessageCompleted] = []
            async for event in self._reason(reply):
                yield event
            if not reply:  # the provider failed; _reason said so
                return
            results: list[ToolResultPart] = []
            async for event in self._use_tools(reply[0].message.tool_uses, results):
                yield event
            self._commit(reply[0], results)
            usage = reply[0].usage or Usage()  # TODO(lead): estimate
            yield AssistantMessage(reply[0].message, usage, reply[0].stop_reason)
            if not results:
                yield TurnEnded("done")
                return

    async def _compact(self) -> AsyncIterator[Event]:
        if self.compactor is not None:
            async for event in self.compactor.before_request(self):
                yield event

    async def _reason(self, reply: list[MessageCompleted]) -> AsyncIterator[Event]:
        """Stream one model call; the completed message lands in `reply`."""
        try:
            async for event in stream_with_retries(self.provider, self.build_request()):
                if isinstance(event, MessageCompleted):
                    reply.append(event)
                else:
                    yield event
        except ProviderError as e:
            reply.clear()
            yield TurnEnded("error", str(e))

    def _commit(self, completed: MessageCompleted, results: list[ToolResultPart]) -> None:
        """The assistant message and all its tool results land together, in one write."""
        usage = completed.usage or Usage()  # TODO(lead): estimate
        self.last_usage = usage
        self.usage_total = self.usage_total + usage
        entries = [
            MessageEntry(
                message=completed.message,
                usage=usage,
                model=self.model,
                cache_read_share=round(usage.cache_read_share, 4),
            )
        ]
        if results:
            entries.append(MessageEntry(message=Message(role="user", content=list(results))))
        self.session.append(*entries)

    async def _use_tools(
        self, uses: list[ToolUsePart], results: list[ToolResultPart]
    ) -> AsyncIterator[Event]:
        """Ask permissions one by one, then run the allowed calls concurrently."""
        if not uses:
            return
        planned = [_Planned(use) for use in uses]
        for item in planned:
            async for event in self._permit(item):
                yield event
        for item in planned:
            if item.output is not None:  # refused before running: unknown tool, bad input, denied
                yield _finished(item)
        runnable = [p for p in planned if p.output is None]
        for item in runnable:
            yield ToolCall(item.use.id, item.use.name, item.use.input)
        tasks = {asyncio.ensure_future(self._call(p)): p for p in runnable}
        pending = set(tasks)
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    yield _finished(tasks[task])
        finally:  # cancelled: stop every running tool before the cancellation goes on
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for item in planned:
            output = item.output or ToolOutput.error("the tool produced no result")
            results.append(
                ToolResultPart(
                    tool_use_id=item.use.id, content=list(output.content), is_error=output.is_error
                )
            )

    async def _permit(self, item: _Planned) -> AsyncIterator[Event]:
        tool = self.tools.get(item.use.name)
        if tool is None:
            names = ", ".join(sorted(self.tools.direct))
            item.output = ToolOutput.error(
                f"Unknown tool {item.use.name!r}. Available tools: {names}."
            )
            return
        if RAW_INPUT_KEY in item.use.input and len(item.use.input) == 1:
            item.output = ToolOutput.error(
                f"The arguments for {tool.name} were not valid JSON. Send a JSON object "
                "matching the tool's input schema."
            )
            return
        try:
            params = parse_params(tool, item.use.input)
            targets = tool.target_paths(params, self.tool_ctx)
        except ToolError as e:
            item.output = ToolOutput.error(str(e))
            return
        decision = self.policy.decide(tool.name, tool.kind, targets)
        answer: PermissionAnswer = "allow" if decision.action == "allow" else "deny"
        if decision.action == "ask":
            future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
            yield PermissionRequested(tool.name, item.use.input, decision.reason, future)
            answer = await future
            if answer == "allow_session":
                self.policy.session_allowed.add(tool.name)
        if answer == "deny":
            why = decision.reason or "not permitted"
            item.output = ToolOutput.error(
                f"Permission denied for {tool.name} ({why}) in permission mode "
                f"{self.policy.mode!r}. Do not retry the same call; tell the user what you "
                "wanted to do so they can allow it or change the mode."
            )

    async def _call(self, item: _Planned) -> None:
        tool = self.tools.get(item.use.name)
        assert tool is not None
        try:
            item.output = await tool.call(parse_params(tool, item.use.input), self.tool_ctx)
        except ToolError as e:
            item.output = ToolOutput.error(str(e))
        except Exception as e:  # a tool bug must reach the model as an error, not end the session
            item.output = ToolOutput.error(f"{tool.name} failed: {type(e).__name__}: {e}")


def _finished(item: _Planned) -> ToolFinished:
    output = item.output or ToolOutput.error("the tool produced no result")
    text = "".join(p.text if isinstance(p, TextPart) else "[image]" for p in output.content)
    return ToolFinished(item.use.id, item.use.name, text, output.is_error)
