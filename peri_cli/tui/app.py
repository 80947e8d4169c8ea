"""The Peri TUI: composes the widgets with the parts that drive them, and routes Textual's
messages and key actions to them: `sessions` (the runtime and the session shown), `turns` (the
queue, commands and the running turn), `keys` (what the keys of `keymap` do), `agents_ui` (the
SubAgents). The parts see the app through `ports.AppPort`, which it implements here.

The shell (conversation, prompt, status) imports no more than Textual, so it can draw first:
`PeriApp` takes a built runtime or a function that builds one, which then runs in a thread after
the first frame while the prompt already takes keys. The core is imported with the runtime.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import BindingType

from peri_cli.tui import approvals_ui, exit_signals, keymap, notify
from peri_cli.tui.agents_ui import AgentsUI
from peri_cli.tui.history import HISTORY_FILE, PromptHistory
from peri_cli.tui.keys import Keys
from peri_cli.tui.notify import Kind
from peri_cli.tui.sessions import Sessions
from peri_cli.tui.startup import QuietStart, RuntimeSlot
from peri_cli.tui.turns import Turns
from peri_cli.tui.widgets.agent_strip import AgentStrip
from peri_cli.tui.widgets.approval_dock import ApprovalDock
from peri_cli.tui.widgets.conversation import PAGE, Conversation
from peri_cli.tui.widgets.key_footer import KeyFooter
from peri_cli.tui.widgets.notice import Level, NoticeLine
from peri_cli.tui.widgets.prompt_area import PromptArea
from peri_cli.tui.widgets.status_bar import StatusBar
from peri_cli.tui.widgets.todo_strip import TodoStrip

if TYPE_CHECKING:
    from peri_cli.agent.host import SessionHost
    from peri_cli.agent.loop import Agent
    from peri_cli.base.events import Event
    from peri_cli.base.first_look import FirstLook
    from peri_cli.base.messages import Usage
    from peri_cli.context.tokens import TokenCounter
    from peri_cli.extensions.hooks import SessionStartSource
    from peri_cli.tui.agent_board import AgentBoard
    from peri_cli.tui.bridge import Bridge
    from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

LONG_TURN = 30.0  # seconds: a turn longer than this rings when it ends


class PeriApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "Peri"
    AUTO_FOCUS = "#prompt"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = keymap.BINDINGS  # the one key table: see `keymap`

    def __init__(
        self,
        runtime: SessionHost | Callable[[], SessionHost],
        prompt: str | None = None,
        *,
        clock: Callable[[], float] = time.time,
        counter: TokenCounter | None = None,
        history: PromptHistory | None = None,
        page: int = PAGE,
        freeze_gc: bool = False,
        long_turn: float = LONG_TURN,
        first_look: FirstLook | None = None,
    ) -> None:
        """`runtime` may be a function building it: it is then called in a thread once the
        first frame is drawn (a `StartupError` from it ends the app with its message), which
        shows the model `first_look` names meanwhile.
        `freeze_gc`: the app owns the process (`run_tui`), see `Sessions._show_runtime`."""
        super().__init__()
        self.slot = RuntimeSlot(runtime)
        self.clock = clock
        self._counter = counter
        self._estimator: TokenCounter | None = None
        self.history = history or PromptHistory(None)
        self.conversation = Conversation(page=page, id="conversation")
        if self.slot.runtime is None:  # no workspace yet: typing works, history and `@` later
            self.prompt_area = PromptArea(self.history, None, placeholder="")
        else:
            from peri_cli.tui.completion import WorkspaceFiles

            self.history = history or PromptHistory(self.slot.runtime.peri_home / HISTORY_FILE)
            workspace = self.slot.runtime.workspace
            self.prompt_area = PromptArea(self.history, WorkspaceFiles(workspace), str(workspace))
        self.approvals = ApprovalDock(id="approvals")
        self.status = StatusBar(clock, id="status")
        if first_look is not None:  # the mode waits for trust: it is not shown until then
            self.status.set(model=first_look.model, provider=first_look.provider, mode="")
        self.agent_strip = AgentStrip(clock, id="agent-strip")
        self.todo_strip = TodoStrip(id="todo-strip")
        self.agents_ui = AgentsUI(self)  # the attached session's SubAgents
        self.sessions = Sessions(
            self,
            self.slot,
            self.agents_ui,
            history=history,
            first_prompt=prompt,
            freeze_gc=freeze_gc,
            on_attached=self._attached,  # (Shift+Tab's cycle, from the mode started in)
        )
        self.turns = Turns(
            self, lambda: self.bridge, long_turn=long_turn, closing=lambda: self._closing
        )
        self.keys = Keys(self)
        self._closing = False
        self._quiet_start: QuietStart | None = None  # the build waits for a gap in the typing
        self.terminal_focused = True  # the terminal has focus (as far as it reports focus changes)
        self.notifications: list[str] = []  # what was sent to the terminal as a notification

    def compose(self) -> ComposeResult:
        yield self.conversation
        yield self.approvals
        yield self.todo_strip
        yield self.prompt_area
        yield self.agent_strip
        yield self.status
        yield KeyFooter()

    # what is built with the runtime

    @property
    def ready(self) -> bool:
        """The runtime is built and attached: prompts and commands can run."""
        return self.sessions.bridge is not None

    @property
    def runtime(self) -> SessionHost:
        assert self.slot.runtime is not None, "the runtime is built after the first frame"
        return self.slot.runtime

    @property
    def bridge(self) -> Bridge:
        assert self.sessions.bridge is not None
        return self.sessions.bridge

    @property
    def agent(self) -> Agent:
        assert self.runtime.agent is not None
        return self.runtime.agent

    @property
    def counter(self) -> TokenCounter:
        """The exact counter (tiktoken once loaded), for when a count must be exact: /context."""
        if self._counter is None:
            from peri_cli.context.tokens import default_counter

            self._counter = default_counter()
        return self._counter

    @property
    def estimator(self) -> TokenCounter:
        """A tokenizer-free counter with the exact one's calibration, for the status line: it
        never loads tiktoken (~200 ms holding the GIL and ~100 MB)."""
        from peri_cli.context.tokens import TokenCounter

        if self._estimator is None:
            self._estimator = TokenCounter(encoding_path=None)
        self._estimator.reset_calibration(self.counter.ratio)
        return self._estimator

    @property
    def busy(self) -> bool:
        turns = self.turns
        return not self.ready or self.sessions.attaching or turns.dispatching or turns.running

    @property
    def queue(self) -> list[str]:
        return self.turns.queue

    @property
    def turn_running(self) -> bool:
        return self.turns.running

    @property
    def quitting(self) -> bool:
        """Quitting: nothing is left to draw on, and a question asked now is denied."""
        return self._closing or not self.screen_stack

    async def on_mount(self) -> None:
        exit_signals.install(self._exit_on_signal)
        if self.slot.pending or (self.slot.runtime and self.slot.runtime.trust_pending):
            self.status.busy("starting")
            if self.slot.pending and not self.sessions.first_prompt:  # (a prompt: at once)
                self._quiet_start = QuietStart(self._run_start)
                self.call_after_refresh(self._quiet_start.arm)
            else:
                self.call_after_refresh(self._run_start)
            return
        await self.sessions.attach(self.runtime)
        self.turns.next()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and self._quiet_start is not None:
            self._quiet_start.typed()
        await super().on_event(event)

    def _run_start(self) -> None:
        self._quiet_start = None
        if not self.quitting:  # (quit before the gap came: nothing to build for)
            self.run_worker(self._start(), group="start")

    async def _start(self) -> None:
        if await self.sessions.start():
            self.turns.next()  # what was typed and sent while starting

    def _attached(self, runtime: SessionHost) -> None:
        self.keys.attached(runtime)
        approvals_ui.listen_network(self, runtime)  # the sandbox's questions about domains

    # the port's acts (`ports.AppPort`), carried out by the parts

    async def notice(self, text: str, level: Level = "info") -> None:
        await self.conversation.add(NoticeLine(text, level))

    def cost_of(self, usage: Usage) -> float | None:
        from peri_cli.base.models import cost_usd

        return cost_usd(self.agent.model, usage)

    async def show_session(self, *, rerender: bool = True, attached: bool = True) -> None:
        await self.sessions.show(rerender=rerender, attached=attached)

    async def switch_session(self, session_id: str, *, fork: bool, rerender: bool = True) -> bool:
        return await self.sessions.switch(session_id, fork=fork, rerender=rerender)

    async def open_picker(self) -> None:
        await self.sessions.open_picker()

    def refresh_status(self) -> None:
        self.sessions.refresh_status()

    def submit(self, text: str) -> None:
        self.turns.submit(text)

    async def run_events(
        self, events: AsyncIterator[Event], activity: str = "thinking", *, prompt_turn: bool = False
    ) -> None:
        await self.turns.run_events(events, activity, prompt_turn=prompt_turn)

    def cancel_turn(self) -> None:
        self.turns.cancel()

    async def session_start(self, source: SessionStartSource) -> None:
        await self.turns.session_start(source)

    def wake_parent(self) -> None:
        self.turns.wake_parent()

    @property
    def agent_board(self) -> AgentBoard | None:
        return self.agents_ui.board

    async def open_agent_pane(self, child_id: str) -> None:
        await self.agents_ui.open_pane(child_id)

    def on_prompt_area_submitted(self, event: PromptArea.Submitted) -> None:
        self.submit(event.text)

    async def on_unmount(self) -> None:
        """Quitting mid-turn cancels it cleanly, so the transcript holds no half turn."""
        self._closing = True
        exit_signals.remove()
        await self.turns.stop()
        await self.agents_ui.stop_all()

    def _exit_on_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: end the normal way (`exit_signals`)."""
        self.exit(return_code=128 + signum)

    # approvals and notifications

    async def on_permission_prompt_answered(self, event: PermissionPrompt.Answered) -> None:
        await approvals_ui.answered(self, event.prompt)

    def on_resize(self, _event: events.Resize) -> None:
        self.call_after_refresh(self.fit_approval)

    def offer_approval(self, prompt: PermissionPrompt) -> None:
        approvals_ui.offer(self, prompt)

    def fit_approval(self) -> None:
        approvals_ui.fit(self)

    def on_approval_dock_asked(self, _event: ApprovalDock.Asked) -> None:
        self.call_after_refresh(self.fit_approval)
        self.notify_user("Peri is waiting for your approval", "permission_prompt")

    def on_app_blur(self, _event: events.AppBlur) -> None:
        self.terminal_focused = False

    def on_app_focus(self, _event: events.AppFocus) -> None:
        self.terminal_focused = True

    def notify_user(self, text: str, kind: Kind = "idle_prompt") -> None:
        """Tell an unfocused terminal that Peri waits (`tui/notify.py`)."""
        if notify.send(
            self.slot.runtime,
            self.terminal_focused,
            text,
            kind,
            run=lambda hook: self.run_worker(hook, group="notification-hook"),
            bell=self.bell,
            write=self._driver.write if self._driver is not None else notify.nowhere,
        ):
            self.notifications.append(text)

    # keys (`keymap` lists them, `keys.Keys` carries them out)

    def on_key(self, event: events.Key) -> None:
        self.keys.on_key(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.keys.allowed(action)

    async def action_escape(self) -> None:
        await self.keys.escape()

    async def action_interrupt(self) -> None:
        await self.keys.interrupt()

    def action_cycle_mode(self) -> None:
        self.keys.cycle_mode()

    async def action_search_history(self) -> None:
        await self.keys.search_history()

    def action_page(self, pages: int) -> None:
        self.keys.page(pages)

    def action_bottom(self) -> None:
        self.keys.bottom()

    def action_toggle_folds(self) -> None:
        self.conversation.toggle_folds()

    def action_redraw(self) -> None:
        self.screen.refresh(layout=True)
        self.refresh(repaint=True, layout=True)

    def action_focus_approval(self) -> None:
        pending = self.approvals.pending
        if pending is not None:
            pending.focus()

    def action_agents_strip(self) -> None:
        self.agent_strip.focus()

    def action_agents_strip_from_prompt(self) -> None:
        self.agent_strip.focus()

    # the SubAgent strip's messages

    def on_agent_strip_open(self, message: AgentStrip.Open) -> None:
        self.run_worker(self.agents_ui.open_pane(message.child_id), group="pane")

    def on_agent_strip_stop(self, message: AgentStrip.Stop) -> None:
        if self.agents_ui.stop_child(message.child_id):
            self.notify("Stopping the SubAgent (its transcript is kept)", timeout=2, markup=False)

    def on_agent_strip_leave(self, _message: AgentStrip.Leave) -> None:
        self.prompt_area.input.focus()


def run_tui(
    runtime: SessionHost | Callable[[], SessionHost],
    prompt: str | None,
    first_look: FirstLook | None = None,
) -> int:
    """Run the TUI on a runtime, or on a function building one (after the first frame)."""
    app = PeriApp(runtime, prompt, freeze_gc=True, first_look=first_look)
    resume = None
    try:
        app.run()
        resume = resume_hint(app.slot.runtime)
    finally:
        app.slot.release()
    if resume:
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            print(resume)
    return app.return_code or 0


def resume_hint(runtime: SessionHost | None) -> str | None:
    """The line printed on exit, for a session that got at least one message."""
    session = runtime.session if runtime is not None else None
    if session is None:
        return None
    from peri_cli.session.transcript import MessageEntry

    if not any(isinstance(e, MessageEntry) for e in session.entries):
        return None
    return f"Resume this session with: peri -r {session.id}"
