"""The attached session's SubAgents in the TUI: their events feed the cards, the strip and the
panes (through the `AgentBoard`), their questions reach the approval dock labelled with their
name, their costs add to the session's, and a background child's end wakes the idle parent
(`AppPort.wake_parent`). Drawing is throttled: children may stream far faster than frames."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from peri_cli.tui.tool_text import look_of

if TYPE_CHECKING:
    from peri_cli.agent.subagents import ChildEvent, SubagentManager
    from peri_cli.tui.agent_board import AgentBoard, ChildInfo
    from peri_cli.tui.ports import AppPort


class AgentsUI:
    """Follows one session's SubAgent manager at a time (a session switch stops the old one's
    children)."""

    def __init__(self, app: AppPort) -> None:
        self.app = app
        self.board: AgentBoard | None = None
        self._followed: SubagentManager | None = None
        self._task: asyncio.Task[None] | None = None  # lives as long as the session
        self._flush_due = False

    def follow(self) -> None:
        """Listen to the attached session's SubAgents (for as long as it stays attached): their
        events feed the cards, the strip and the panes, their questions reach the approval
        dock. While nothing listens, the core denies a child's questions."""
        from peri_cli.tui.agent_board import AgentBoard

        manager = self.app.runtime.subagents
        if manager is self._followed and self.board is not None:
            return
        old, self._followed = self._followed, manager
        if self.board is not None:  # the other session's children are stopped: so are their asks
            for info in self.board.children.values():
                for prompt in info.prompts:
                    prompt.cancel()
                info.prompts.clear()
        first = self.board is None
        board = self.board = AgentBoard(self.app.clock, look_of(self.app.runtime))
        self.app.agent_strip.show([])
        if old is not None:  # a session switch: what ran in the other session is stopped
            self.app.run_worker(self.stop_all(old), group="old-children")
        if self._task is not None:
            self._task.cancel()
        if manager is not None:  # (a task, not a worker: "wait for the workers" must not wait)
            self._task = asyncio.create_task(self._events(manager, board))
        if self.app.runtime.session is not None:
            self.app.run_worker(self._load(board), group="child-records", exclusive=True)
        if first:
            self.app.set_interval(1.0, self.tick, name="agents")

    async def _load(self, board: AgentBoard) -> None:
        """A resumed session's children, as their transcripts recorded them."""
        from peri_cli.tui.agent_board import read_children_async
        from peri_cli.tui.bridge import add_cost

        session = self.app.agent.session
        infos = await read_children_async(
            session.dir, look_of(self.app.runtime), self.app.agent.model
        )
        if board is not self.board or not infos:
            return
        spent: float | None = 0.0
        for info in board.add_records(infos):  # (a live child's cost is counted already)
            spent = add_cost(spent, info.cost)
        self.app.status.set(cost_usd=add_cost(self.app.status.status.cost_usd, spent))
        self.flush()

    async def _events(self, manager: SubagentManager, board: AgentBoard) -> None:
        from peri_cli.base.provider import TextDelta, ThinkingDelta

        async for item in manager.events():
            if isinstance(item.event, TextDelta | ThinkingDelta):  # most events: only logged
                board.apply(item, None)
                continue
            try:
                await self._on_event(manager, board, item)
            except Exception as e:  # a drawing bug must not cut the children off from the user
                self.app.log.error(f"SubAgent event {type(item.event).__name__}: {e!r}")

    async def _on_event(
        self, manager: SubagentManager, board: AgentBoard, item: ChildEvent
    ) -> None:
        from peri_cli.agent.subagents import ChildStateChanged
        from peri_cli.base.events import AssistantMessage, PermissionRequested
        from peri_cli.base.models import cost_usd
        from peri_cli.tui.bridge import add_cost

        event = item.event
        info = board.apply(item, manager.children.get(item.child_id), self.app.agent.model)
        if self.app.quitting:
            info = None  # quitting: a question left now is denied
        if info is None:
            if isinstance(event, PermissionRequested) and not event.future.done():
                event.future.set_result("deny")  # (a child the manager never had: cannot be)
            return
        if isinstance(event, PermissionRequested):
            await self._ask(info, event)
        elif isinstance(event, AssistantMessage):  # its cost is the session's too
            more = cost_usd(info.model or self.app.agent.model, event.usage)
            info.cost = add_cost(info.cost, more)
            self.app.status.set(cost_usd=add_cost(self.app.status.status.cost_usd, more))
        elif isinstance(event, ChildStateChanged) and not info.running:
            for prompt in info.prompts:
                prompt.cancel()  # its question went with it
            info.prompts.clear()
        self.changed()
        if isinstance(event, ChildStateChanged) and not info.running and info.background:
            self.app.wake_parent()

    async def _ask(self, info: ChildInfo, event: object) -> None:
        """A child's question, in the approval dock like the main agent's, with its name."""
        from peri_cli.base.events import PermissionRequested
        from peri_cli.tui.bridge import make_prompt
        from peri_cli.tui.screens.agent_pane import AgentPane

        assert isinstance(event, PermissionRequested)
        if event.agent is None:
            event.agent = info.label
        prompt = make_prompt(event, self.app.runtime.workspace)
        info.prompts.append(prompt)
        if isinstance(self.app.screen, AgentPane):
            self.app.screen.dismiss(None)
        await self.app.approvals.ask(prompt)
        self.app.offer_approval(prompt)

    def changed(self) -> None:
        """Cards and the strip are redrawn at most 20 times a second, however fast children
        stream."""
        if not self._flush_due:
            self._flush_due = True
            self.app.set_timer(0.05, self.flush)

    def flush(self) -> None:
        self._flush_due = False
        board = self.board
        if board is None or self.app.quitting:
            return  # (quitting: nothing left to draw on)
        board.flush()
        running = board.running()
        rows = len(self.app.agent_strip.rows)
        self.app.agent_strip.show(running)
        if len(running) != rows and self.app.approvals.pending is not None:
            self.app.call_after_refresh(self.app.fit_approval)  # the strip took or gave back rows
        if not running and self.app.focused is self.app.agent_strip:
            self.app.prompt_area.input.focus()

    def tick(self) -> None:
        if self.app.quitting:
            return
        board = self.board
        if board is not None and board.running():
            board.refresh_running()
            self.flush()
        self.app.wake_parent()

    def stop_child(self, child_id: str) -> bool:
        manager = self.app.runtime.subagents if self.app.ready else None
        return manager is not None and manager.stop(child_id)

    async def stop_all(self, manager: SubagentManager | None = None) -> None:
        """On exit (or a session switch), running children are stopped and marked so."""
        if manager is None and self._task is not None:
            self._task.cancel()
        manager = manager or self._followed
        if manager is not None:
            with contextlib.suppress(Exception):
                await manager.stop_all()

    async def open_pane(self, child_id: str) -> None:
        from peri_cli.tui.screens.agent_pane import AgentPane

        board = self.board
        if board is None or child_id not in board.children:
            return
        info = board.children[child_id]
        r = self.app.runtime
        status = {
            "model": info.model or self.app.agent.model,
            "provider": r.provider_name,
            "mode": self.app.agent.policy.mode,
            "window": r.context_window,
        }
        pane = AgentPane(
            board,
            child_id,
            cost_of=self.app.cost_of,
            approvals=self.app.approvals,
            stop=self.stop_child,
            status=status,
            look=look_of(r),
        )
        await self.app.push_screen(pane)

    def cost(self) -> float | None:
        """What this session's SubAgents cost so far (None: some of it has no known price)."""
        from peri_cli.tui.bridge import add_cost

        total: float | None = 0.0
        for info in self.board.children.values() if self.board is not None else ():
            total = add_cost(total, info.cost)
        return total
