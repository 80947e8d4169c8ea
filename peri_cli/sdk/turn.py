"""One prompt run to its end on a runtime: slash commands, SessionStart hooks, MCP prompts, `@path`
attachments, the loop, background SubAgents' reports, and the questions the loop asks (answered
by the program's `can_use_tool`, or denied). Events go to `emit`, the `result` last."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from peri_cli.agent.attachments import AttachContext, attach, mentions
from peri_cli.agent.custom_command import command_turn
from peri_cli.agent.host import CommandError
from peri_cli.agent.sessionstart import run_session_start
from peri_cli.agent.structured import STRUCTURED_TOOL
from peri_cli.agent.subagents import SubagentManager
from peri_cli.base.events import Event as CoreEvent
from peri_cli.base.events import PermissionRequested
from peri_cli.base.messages import ImagePart
from peri_cli.base.textsafe import visible
from peri_cli.extensions.commands import parse_command
from peri_cli.extensions.custom_commands.catalog import CustomCommand
from peri_cli.sdk.asking import Asker
from peri_cli.sdk.commands import HANDLERS
from peri_cli.sdk.composed import Runtime
from peri_cli.sdk.events import Event, SystemEvent
from peri_cli.sdk.structured import StructuredPrompt
from peri_cli.sdk.translate import Translator
from peri_cli.session.transcript import MessageEntry

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent
    from peri_cli.mcp.status import ServerStatus

Emit = Callable[[Event], None]
Images = Sequence[tuple[str, str]]  # (media type, base64 data) of `[image #1]`, `[image #2]`, ...


class PromptRun:
    """The run of one prompt: what it emits and the `Translator` that keeps its outcome."""

    def __init__(
        self,
        runtime: Runtime,
        asker: Asker,
        emit: Emit,
        *,
        partial: bool,
        schema: dict[str, Any] | None = None,
    ) -> None:
        """`schema`: the prompt must end with a `StructuredOutput` answer fitting it."""
        agent = runtime.agent
        assert agent is not None and runtime.session is not None
        self.runtime, self.agent, self.asker, self.emit = runtime, agent, asker, emit
        self.out = Translator(runtime.session.id, partial=partial)
        self.schema = schema

    def core(self, event: CoreEvent) -> None:
        for e in self.out.event(event):
            self.emit(e)

    async def _answered(self, events: AsyncIterator[CoreEvent]) -> None:
        async for event in events:
            if isinstance(event, PermissionRequested):
                await self.asker.answer(event)
                if event.ends_turn and event.asking is not None and event.asking.plan:
                    self.out.result = event.asking.plan  # (headless plan mode's answer)
            self.core(event)

    def init_line(self) -> None:
        agent = self.agent
        self.emit(
            SystemEvent.of(
                "init",
                session_id=agent.session.id,
                model=agent.model,
                provider=agent.provider.name,
                # (a prompt asking for structured output also has StructuredOutput)
                tools=sorted({*agent.tools.direct, *([STRUCTURED_TOOL] if self.schema else [])}),
                permission_mode=agent.policy.mode,
            )
        )

    async def run(self, prompt: str, *, first: bool, images: Images = ()) -> None:
        """The prompt's events, as `peri -p` has always run one; a cancellation (interrupt)
        ends it with the error "cancelled"."""
        agent, runtime = self.agent, self.runtime
        invocation = parse_command(prompt)
        try:
            if invocation is not None and invocation.command.headless:
                await HANDLERS[invocation.command.name](self, invocation.argument)
            elif invocation is not None:
                self.out.error = f"/{invocation.command.name} is only available in the TUI"
            else:
                await self.runtime.wait_given_servers(self._say)
                if first:
                    for notice in await run_session_start(
                        agent.hooks, agent.inbox, runtime.session_source
                    ):
                        self.core(notice)
                if (custom := self.runtime.custom_commands.find(prompt.strip())) is not None:
                    await self._answer(self._custom(*custom, images))
                elif (expanded := await self._expand(prompt)) is not None:
                    attached = await self._attachments(prompt, images)
                    await self._answer(agent.run(expanded, attached))
        except asyncio.CancelledError:
            self.out.error = "cancelled"

    async def _answer(self, turn: AsyncIterator[CoreEvent]) -> None:
        """The prompt's turn; with a schema, as `StructuredPrompt` runs it (one retry)."""
        if self.schema is None:
            await self._with_children(turn)
        else:
            await StructuredPrompt(self.schema).run(self.agent, self.out, turn, self._with_children)

    def _say(self, text: str) -> None:
        self.emit(SystemEvent.of("notice", level="warning", text=text))

    def _custom(
        self, command: CustomCommand, arguments: str, images: Images
    ) -> AsyncIterator[CoreEvent]:
        """`/name args` of a custom command: its `!` lines, attachments and turn."""
        pasted = {n: ImagePart(media_type=t, data=d) for n, (t, d) in enumerate(images, 1)}
        return command_turn(
            self.agent,
            command,
            arguments,
            workspace=self.runtime.workspace,
            provider=self.runtime.provider_name,
            images=pasted,
        )

    async def _with_children(self, turn: AsyncIterator[CoreEvent]) -> None:
        manager = self.runtime.subagents
        watcher = asyncio.create_task(self._watch_children(manager)) if manager else None
        try:
            await self._until_quiet(manager, turn)
        finally:
            if manager is not None:  # what still runs is stopped and marked interrupted
                await manager.stop_all()
            if (hooks := self.agent.hooks) is not None:  # and async hooks still running end
                await hooks.background.stop_all()
                for notice in hooks.waiting_notices():  # what those that ended last said
                    self.core(notice)
            if watcher is not None:
                watcher.cancel()

    async def _until_quiet(
        self, manager: SubagentManager | None, turn: AsyncIterator[CoreEvent]
    ) -> None:
        """The prompt's turn, then one more turn per background SubAgent report (or rewake
        hook's output), until no SubAgent or async hook runs or waits and nothing waking is
        unread (or the turn limit is reached)."""
        agent = self.agent
        await self._answered(turn)
        while self.out.error is None:
            if agent.max_turns is not None and agent.turns >= agent.max_turns:
                if manager is not None and manager.busy():
                    self.out.error = f"stopped after {agent.turns} model calls (--max-turns)"
                return
            if agent.report_waiting:
                await self._answered(agent.run(None))
            elif waits := _waits(manager, agent):
                await _first(waits)
            else:
                return

    async def _watch_children(self, manager: SubagentManager) -> None:
        async for item in manager.events():
            event = item.event
            if isinstance(event, PermissionRequested):
                await self.asker.answer(event)
            child = manager.children.get(item.child_id)
            parent = child.tool_use_id if child is not None else None
            for e in self.out.child_event(item.child_id, event, parent):
                self.emit(e)

    async def _expand(self, prompt: str) -> str | None:
        """`/mcp__<server>__<prompt> [args]` -> the prompt's text; None (the error set) when the
        server cannot give it."""
        try:
            expanded = await self.runtime.expand_mcp_prompt(prompt)
        except CommandError as e:
            self.out.error = visible(str(e))
            return None
        return prompt if expanded is None else expanded

    async def _attachments(self, prompt: str, images: Images = ()) -> MessageEntry | None:
        """What the prompt's `@path`s and `[image #N]`s attach, as the TUI attaches them;
        notices say what."""
        pasted = {n: ImagePart(media_type=t, data=d) for n, (t, d) in enumerate(images, 1)}
        if not mentions(prompt) and not pasted:
            return None
        agent = self.agent
        ctx = AttachContext.of(agent, self.runtime.workspace)
        found = await attach(prompt, ctx, pasted)
        if found.attached:
            text = "Attached " + ", ".join(f"@{p}" for p in found.attached)
            self.emit(SystemEvent.of("notice", level="info", text=text))
        for line in found.skipped:
            self.emit(SystemEvent.of("notice", level="warning", text=line))
        return found.entry()


def _waits(manager: SubagentManager | None, agent: Agent) -> list[Coroutine[Any, Any, None]]:
    """What may still bring a report: background SubAgents, async hooks."""
    waits: list[Coroutine[Any, Any, None]] = []
    if manager is not None and manager.busy():
        waits.append(manager.next_report())
    if agent.hooks is not None and agent.hooks.background.busy():
        waits.append(agent.hooks.background.next_done())
    return waits


async def _first(waits: list[Coroutine[Any, Any, None]]) -> None:
    """Until the first of `waits` is over (the others are cancelled)."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def watch_mcp(runtime: Runtime, emit: Emit) -> Callable[[], None] | None:
    """One `system`/`mcp` event per server state change (and one per server now), emitted on
    this loop whatever thread the manager reports from; returns how to stop listening."""
    mcp = runtime.mcp
    if mcp is None:
        return None
    loop = asyncio.get_running_loop()
    last: dict[str, tuple[object, ...]] = {}
    stopped = False

    def show(status: ServerStatus) -> None:
        key = (status.state, status.detail, status.tools, status.prompts)
        if not stopped and last.get(status.name) != key:
            last[status.name] = key
            emit(SystemEvent.of("mcp", **status.to_json()))

    def listener(status: ServerStatus) -> None:
        loop.call_soon_threadsafe(show, status)  # (a closed loop raises; the manager ignores it)

    mcp.add_listener(listener)
    for status in mcp.statuses():
        show(status)

    def stop() -> None:
        nonlocal stopped
        stopped = True

    return stop
