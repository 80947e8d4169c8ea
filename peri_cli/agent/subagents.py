"""SubAgents: child loops with their own history and transcript, run in the foreground (the
parent's tool call waits for the report) or in the background (at most 3 at once; the report
wakes the parent through its inbox).

A child's events go to `events()` for whoever shows them (the TUI's cards and panes, headless
stream-json); while nobody listens, its permission questions are answered "deny".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from peri_cli.agent.factory import AgentConfig, AgentFactory
from peri_cli.agent.interruption import describe_call
from peri_cli.agent.loop import REPORT_HEAD, Agent
from peri_cli.agent.structured import STRUCTURED_TOOL
from peri_cli.base.events import (
    AssistantMessage,
    Event,
    PermissionRequested,
    ToolCall,
    TurnEnded,
)
from peri_cli.base.messages import Usage
from peri_cli.base.model_alias import resolve_model_alias
from peri_cli.base.tool import ToolOutput, ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.extensions.agent_types import AgentCatalog, AgentType
from peri_cli.session.children import create_child
from peri_cli.session.transcript import AgentRef, AgentState, AgentStatus

MAX_BACKGROUND = 3


@dataclass(frozen=True)
class ChildStateChanged:
    state: AgentState
    detail: str = ""


@dataclass(frozen=True)
class ChildEvent:
    """Something a SubAgent did (one of its loop's events) or a change of its state."""

    child_id: str
    event: Event | ChildStateChanged


@dataclass
class Child:
    id: str
    type: AgentType
    description: str
    prompt: str
    tool_use_id: str
    background: bool
    state: AgentState = "queued"
    detail: str = ""
    started: float = 0.0
    ended: float | None = None
    usage: Usage = field(default_factory=Usage)
    last_tool: str | None = None
    report: str = ""
    note: str = ""  # said when it starts (its type's model alias had no counterpart)
    agent: Agent | None = None
    task: asyncio.Task[None] | None = None

    @property
    def label(self) -> str:
        return f"{self.type.name}: {self.description}" if self.description else self.type.name


def _instructions(text: str) -> ContributionChain:
    chain = ContributionChain()
    chain.add("agent_type", lambda _ctx: text or None)
    return chain


class SubagentManager:
    """The SubAgents of one session: builds them with the factory, runs them, reports."""

    def __init__(
        self,
        parent: Agent,
        factory: AgentFactory,
        catalog: AgentCatalog,
        *,
        max_background: int = MAX_BACKGROUND,
    ) -> None:
        self.parent = parent
        self.factory = factory
        self.catalog = catalog
        self.max_background = max_background
        self.children: dict[str, Child] = {}
        self.listening = False  # a UI consumes events() and answers permission questions
        self._queue: asyncio.Queue[ChildEvent] = asyncio.Queue()
        self._waiting: list[Child] = []  # background children not started yet
        self._finished = asyncio.Event()

    # --- what the Agent tool calls -------------------------------------------------------------

    async def run_foreground(
        self, kind: AgentType, prompt: str, description: str, tool_use_id: str
    ) -> ToolOutput:
        child = self._new(kind, prompt, description, tool_use_id, background=False)
        # its own task, so that `stop` ends this child alone (the parent then reads its report)
        task = child.task = asyncio.get_running_loop().create_task(self._drive(child))
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the parent's turn was stopped: its child stops with it
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise
        if not task.cancelled():
            task.result()  # what went wrong in the child goes to the tool call, as before
        return ToolOutput(
            ToolOutput.text(self.report(child)).content, is_error=child.state != "done"
        )

    def start_background(
        self, kind: AgentType, prompt: str, description: str, tool_use_id: str
    ) -> str:
        child = self._new(kind, prompt, description, tool_use_id, background=True)
        self._waiting.append(child)
        running = self._running_background()
        self._pump()
        queued = (
            f" It is queued: {running} SubAgents already run in the background (at most "
            f"{self.max_background} at once); it starts when one finishes."
            if child in self._waiting
            else ""
        )
        return (
            f"Started SubAgent {child.id[:8]} ({child.label}) in the background.{queued} Its "
            "report will arrive as a message when it finishes; you can go on meanwhile."
        )

    # --- control -------------------------------------------------------------------------------

    def busy(self) -> bool:
        """Background SubAgents are running or waiting to start."""
        return bool(self._waiting) or self._running_background() > 0

    async def next_report(self) -> None:
        """Until a background SubAgent has delivered a report since the last call."""
        await self._finished.wait()
        self._finished.clear()

    def stop(self, child_id: str) -> bool:
        """Stop one SubAgent (and its tools); False when there is no such running child."""
        child = self._find(child_id)
        if child is None or child.state not in ("queued", "running"):
            return False
        if child in self._waiting:
            self._waiting.remove(child)
            self._set_state(child, "interrupted", "stopped before it started")
            self._deliver(child)
        elif child.task is not None:
            child.task.cancel()
        return True

    async def stop_all(self) -> None:
        """Stop every background SubAgent (on exit, or when a headless run is cancelled)."""
        for child in list(self._waiting):
            self.stop(child.id)
        tasks = [c.task for c in self.children.values() if c.task and not c.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def events(self) -> AsyncIterator[ChildEvent]:
        """Everything the SubAgents do, as it happens; marks the manager as listened to."""
        self.listening = True
        try:
            while True:
                yield await self._queue.get()
        finally:
            self.listening = False

    def report(self, child: Child) -> str:
        """What the parent reads about a finished child."""
        head = f"{REPORT_HEAD}{child.id[:8]} ({child.label})"
        if child.state == "done":
            body = child.report.strip() or "(it finished without a final message)"
            return f"{head} finished.]\n\n{body}"
        if child.state == "failed":
            partial = f"\n\nIts last message:\n{child.report.strip()}" if child.report else ""
            return f"{head} failed: {child.detail}.]{partial}"
        partial = f"\n\nIts last message:\n{child.report.strip()}" if child.report else ""
        return (
            f"{head} was interrupted before it finished ({child.detail or 'stopped'}); its "
            f"work may be partly done.]{partial}"
        )

    # --- running -------------------------------------------------------------------------------

    def _new(
        self, kind: AgentType, prompt: str, description: str, tool_use_id: str, *, background: bool
    ) -> Child:
        child = Child(
            id=str(uuid.uuid4()),
            type=kind,
            description=" ".join(description.split())[:80],
            prompt=prompt,
            tool_use_id=tool_use_id,
            background=background,
        )
        self.children[child.id] = child
        ref = AgentRef(
            parent_session=self.parent.session.id,
            tool_use_id=tool_use_id,
            type=kind.name,
            description=child.description,
            background=background,
        )
        session = create_child(self.parent.session, child.id, ref)
        child.agent = self.factory.build(session, self._config(child))
        self._set_state(child, "queued")
        return child

    def _config(self, child: Child) -> AgentConfig:
        parent = self.parent
        chain = _instructions(child.type.instructions)
        for name, contributor in parent.chain.contributors:  # git branch, notes: as the parent
            chain.add(name, contributor)
        # `model: sonnet` is Claude Code's alias: the provider's model of that family
        model, note = resolve_model_alias(
            child.type.model or "", parent.provider.name, parent.model
        )
        child.note = f"type {child.type.name}: {note}" if note else ""
        return AgentConfig(
            model=model,
            policy=parent.policy,
            max_turns=child.type.max_turns,
            tools=self._tools_for(child.type),
            chain=chain,
            agent_id=child.id,
            label=child.label,
            owners=parent.tool_ctx.owners,
        )

    def _tools_for(self, kind: AgentType) -> ToolRegistry:
        """The type's tools within the parent's. `general` keeps the parent's exact list (its
        cached prefix is then shared) and refuses an Agent call when it is made."""
        parent = self.parent.tools
        hidden = {*kind.disallowed, STRUCTURED_TOOL}  # the parent's answer only, never a child's
        if kind.read_only:
            kept = {n: t for n, t in parent.direct.items() if t.traits.read_only}
            return ToolRegistry(direct={n: t for n, t in kept.items() if n not in hidden})
        if kind.tools is None:
            direct = {n: t for n, t in parent.direct.items() if n not in hidden}
            deferred = {n: t for n, t in parent.deferred.items() if n not in hidden}
            return ToolRegistry(direct=direct, deferred=deferred, sources=dict(parent.sources))
        wanted = [n for n in kind.tools if n not in hidden and n != "Agent"]
        direct = {n: t for n in wanted if (t := parent.get(n)) is not None}
        return ToolRegistry(direct=direct)

    async def _drive(self, child: Child) -> None:
        agent = child.agent
        assert agent is not None
        child.started = time.monotonic()
        self._set_state(child, "running", child.note)
        ended = TurnEnded("done")
        try:
            async for event in agent.run(child.prompt):
                self._observe(child, event)
                if isinstance(event, TurnEnded):
                    ended = event
            if ended.reason == "done":
                self._set_state(child, "done")
            elif ended.reason == "max_turns":
                self._set_state(child, "failed", f"it stopped at its turn limit ({ended.error})")
            else:
                self._set_state(child, "failed", ended.error or ended.reason)
        except asyncio.CancelledError:
            self._set_state(child, "interrupted", "stopped")
            raise
        finally:
            child.ended = time.monotonic()
            self.parent.tool_ctx.owners.release(child.id)
            agent.session.close()

    def _observe(self, child: Child, event: Event) -> None:
        if isinstance(event, PermissionRequested) and not self.listening:
            event.future.set_result("deny")  # nobody to ask: as headless, the mode decides
        elif isinstance(event, AssistantMessage):
            child.usage = child.usage + event.usage
            self.parent.usage_total = self.parent.usage_total + event.usage
            self.parent.usage_estimated = self.parent.usage_estimated or event.estimated
            if event.message.text.strip():
                child.report = event.message.text
        elif isinstance(event, ToolCall):
            child.last_tool = describe_call(event.name, event.input)
        self._emit(child, event)

    def _set_state(self, child: Child, state: AgentState, detail: str = "") -> None:
        child.state, child.detail = state, detail
        if child.agent is not None:
            with contextlib.suppress(OSError, ValueError):  # a closed or full disk: the state
                child.agent.session.append(AgentStatus(status=state, detail=detail))
        self._emit(child, ChildStateChanged(state, detail))

    def _emit(self, child: Child, event: Event | ChildStateChanged) -> None:
        if self.listening:
            self._queue.put_nowait(ChildEvent(child.id, event))

    # --- background ----------------------------------------------------------------------------

    def _running_background(self) -> int:
        return sum(
            1 for c in self.children.values() if c.background and c.task and not c.task.done()
        )

    def _pump(self) -> None:
        while self._waiting and self._running_background() < self.max_background:
            child = self._waiting.pop(0)
            child.task = asyncio.get_running_loop().create_task(self._run_background(child))

    async def _run_background(self, child: Child) -> None:
        try:
            await self._drive(child)
        except asyncio.CancelledError:
            pass  # stopped: reported as interrupted below
        finally:
            self._deliver(child)
            self._pump()

    def _deliver(self, child: Child) -> None:
        """A background child's report goes to the parent's inbox and wakes whoever waits."""
        self.parent.inbox.append(self.report(child))
        self._finished.set()

    def _find(self, prefix: str) -> Child | None:
        found = [c for i, c in self.children.items() if i.startswith(prefix)]
        return found[0] if len(found) == 1 else None
