"""A SubAgent's pane: its live stream, tool calls and results drawn as in the main conversation
(the same `Conversation` and `Bridge`), with its state, elapsed time and its own status line.

A pane is a full-screen tab over the main screen, one child at a time (←/→ switch children), not
a split: at 60x20 a split would leave each side a handful of rows, and a tab gives the child's
stream the whole height with the conversation widget as it is. Closing it (Esc) returns to the
prompt and never stops the child; `x` does. While no pane shows a child, its events only go to
its log (streamed text merged), which a pane replays in one go when it opens: hidden panes cost
no drawing at all. An approval (the parent's or a child's) closes the pane, so the question is
on screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from peri_cli.agent.subagents import ChildEvent, ChildStateChanged
from peri_cli.base.provider import TextDelta, ThinkingDelta
from peri_cli.base.textsafe import visible
from peri_cli.tui.bridge import Bridge, CostOf
from peri_cli.tui.format import plain
from peri_cli.tui.tool_text import NO_LOOK, ToolLook
from peri_cli.tui.widgets.agent_card import child_summary
from peri_cli.tui.widgets.approval_dock import ApprovalDock
from peri_cli.tui.widgets.conversation import Conversation
from peri_cli.tui.widgets.notice import Level, NoticeLine
from peri_cli.tui.widgets.status_bar import StatusBar
from peri_cli.tui.widgets.todo_strip import TodoStrip

if TYPE_CHECKING:
    from peri_cli.tui.agent_board import AgentBoard, ChildInfo, LogItem

KEYS = "Esc close · ←/→ other SubAgents · x stop · PgUp/PgDn ↑/↓ scroll · End follow"
ENDED: dict[str, tuple[str, Level]] = {
    "done": ("SubAgent finished.", "info"),
    "failed": ("SubAgent failed", "error"),
    "interrupted": ("SubAgent interrupted", "warning"),
}


class AgentPane(ModalScreen[None]):
    DEFAULT_CSS = """
    AgentPane {
        layout: vertical;
        background: $background;
        align: left top;
    }
    AgentPane > #pane-head {
        height: auto;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    AgentPane > #pane-keys { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("up", "line(-1)", "Up", show=False),
        Binding("down", "line(1)", "Down", show=False),
        Binding("home", "top", "Top", show=False),
        Binding("end,ctrl+end", "follow", "Follow", show=False),
        Binding("left,[", "switch(-1)", "Previous", show=False),
        Binding("right,]", "switch(1)", "Next", show=False),
        Binding("x", "stop", "Stop", show=False),
        Binding("ctrl+o", "toggle_folds", "Folds", show=False),
    ]

    def __init__(
        self,
        board: AgentBoard,
        child_id: str,
        *,
        cost_of: CostOf,
        approvals: ApprovalDock,
        stop: Callable[[str], bool],
        status: dict[str, object],
        look: ToolLook = NO_LOOK,
    ) -> None:
        super().__init__()
        self.board = board
        self.child_id = child_id
        self.cost_of = cost_of
        self.approvals = approvals
        self.stop_child = stop
        self.look = look
        self.head = Static("", id="pane-head")
        self.conversation = Conversation(id="agent-conversation", look=look)
        self.todo_strip = TodoStrip(id="pane-todos", whole="")  # the child's own task list
        self.status = StatusBar(board.clock, id="pane-status")
        self.status.set(**status)
        self.keys = Static(KEYS, id="pane-keys")
        self._queue: asyncio.Queue[LogItem] = asyncio.Queue()
        self._bridge: Bridge | None = None

    def compose(self) -> ComposeResult:
        yield self.head
        yield self.conversation
        yield self.todo_strip
        yield self.status
        yield self.keys

    @property
    def info(self) -> ChildInfo | None:
        return self.board.children.get(self.child_id)

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)
        self._open(self.child_id)

    def on_unmount(self) -> None:
        self.board.unsubscribe(self.child_id, self._listen)

    # --- following a child ---------------------------------------------------------------------

    def _listen(self, item: ChildEvent) -> None:
        self._queue.put_nowait(item.event)

    def _open(self, child_id: str) -> None:
        self.board.unsubscribe(self.child_id, self._listen)
        self.child_id = child_id
        self._queue = asyncio.Queue()
        snapshot = self.board.subscribe(child_id, self._listen)  # nothing is missed in between
        self.run_worker(self._show_child(snapshot), group="pane", exclusive=True)

    async def _show_child(self, snapshot: list[LogItem]) -> None:
        await self.conversation.clear_screen()
        self.status.idle()
        self.todo_strip.show(None)  # (another child's list went with its pane)
        self._bridge = Bridge(
            self.conversation,
            self.status,
            self.cost_of,
            approvals=self.approvals,
            look=self.look,
            todos=self.todo_strip,
        )
        info = self.info
        self._draw_head()
        if info is not None and not info.live and info.path is not None:
            await self._show_transcript(info.path)
        elif info is not None and info.task:  # what it was asked, as its first message
            from peri_cli.tui.widgets.user_message import UserMessage

            await self.conversation.add(UserMessage(info.task))
        for event in snapshot:
            await self._show(event)
        queue = self._queue
        while True:
            event = await queue.get()
            await self._show(event)
            while not queue.empty():  # what arrived meanwhile, in one go
                await self._show(queue.get_nowait())

    async def _show_transcript(self, path: Path) -> None:
        """A child of a resumed session: its record, as a resumed conversation shows one, and
        the task list it kept."""
        from peri_cli.context.projection import visible_entries
        from peri_cli.context.todos import latest_todos
        from peri_cli.session.transcript_file import TranscriptError, load
        from peri_cli.tui.items import display_items

        try:
            entries = (await asyncio.to_thread(load, path)).entries
        except (TranscriptError, OSError) as e:
            await self.conversation.add(NoticeLine(f"Cannot read its transcript: {e}", "error"))
            return
        await self.conversation.show_items(display_items(entries))
        self.todo_strip.show(latest_todos(visible_entries(entries)))
        info = self.info
        if info is not None:
            await self._ended(info.state, info.detail)

    async def _show(self, event: LogItem) -> None:
        bridge = self._bridge
        assert bridge is not None
        if isinstance(event, ChildStateChanged):
            self._draw_head()
            if event.state == "running":
                self.status.busy("thinking")
            elif event.state not in ("queued", "running"):
                await bridge.finish_run(cancelled=event.state == "interrupted")
                self.status.idle()
                await self._ended(event.state, event.detail)
            return
        await bridge.handle(event)
        if not isinstance(event, TextDelta | ThinkingDelta):  # (not once per streamed token)
            bridge.follow_todos(event)
            self._draw_head()

    async def _ended(self, state: str, detail: str) -> None:
        text, level = ENDED.get(state, (f"SubAgent {state}", "info"))
        if detail:
            text = f"{text}: {detail}"
        await self.conversation.add(NoticeLine(text, level))
        self.conversation.note_output()

    # --- drawing ------------------------------------------------------------------------------

    def _draw_head(self) -> None:
        info = self.info
        if info is None:
            self.head.update(Content.styled("(this SubAgent is gone)", "dim"))
            return
        order = self._order()
        where = f"SubAgent {order.index(info.id) + 1}/{len(order)}" if info.id in order else ""
        pieces = child_summary(info, self.board.clock(), width=60)
        line = Content(" · ").join(
            [
                Content.styled(where, "dim"),
                plain(info.label, "bold"),
                *pieces,
            ]
        )
        self.head.update(line)

    def _tick(self) -> None:
        self._draw_head()
        if self.approvals.pending is not None:  # a question waits on the main screen
            self.dismiss(None)

    def _order(self) -> list[str]:
        return list(self.board.children)

    # --- keys ---------------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss(None)

    def action_page(self, pages: int) -> None:
        if pages < 0:
            self.conversation.scroll_page_up(animate=False)
        else:
            self.conversation.scroll_page_down(animate=False)

    def action_line(self, step: int) -> None:
        self.conversation.scroll_relative(y=step, animate=False)

    def action_top(self) -> None:
        self.conversation.scroll_home(animate=False)

    def action_follow(self) -> None:
        self.conversation.to_bottom()

    def action_switch(self, step: int) -> None:
        order = self._order()
        if len(order) < 2 or self.child_id not in order:
            return
        self._open(order[(order.index(self.child_id) + step) % len(order)])

    def action_stop(self) -> None:
        info = self.info
        if info is not None and self.stop_child(info.id):
            self.notify(visible(f"Stopping {info.label}"), timeout=2, markup=False)

    def action_toggle_folds(self) -> None:
        self.conversation.toggle_folds()
