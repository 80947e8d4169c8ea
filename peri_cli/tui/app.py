"""The Peri TUI: composes the widgets and routes prompts, commands, keys and sessions.

The shell (conversation, prompt, status) imports no more than Textual, so it can draw first:
`PeriApp` takes a built runtime or a function that builds one, which then runs in a thread after
the first frame while the prompt already takes keys. The core is imported with the runtime.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer

from peri_cli.tui.agents_ui import AgentsUI
from peri_cli.tui.history import HISTORY_FILE, PromptHistory
from peri_cli.tui.startup import RuntimeSlot
from peri_cli.tui.widgets.agent_strip import AgentStrip
from peri_cli.tui.widgets.conversation import PAGE, Conversation
from peri_cli.tui.widgets.notice import Level, NoticeLine
from peri_cli.tui.widgets.permission_prompt import ApprovalDock, PermissionPrompt
from peri_cli.tui.widgets.prompt_area import PromptArea
from peri_cli.tui.widgets.prompt_input import PLACEHOLDER
from peri_cli.tui.widgets.status_bar import StatusBar
from peri_cli.tui.widgets.user_message import UserMessage

if TYPE_CHECKING:
    from peri_cli.agent.host import ExtraCommand, SessionHost
    from peri_cli.agent.loop import Agent
    from peri_cli.base.events import Event
    from peri_cli.base.messages import Usage
    from peri_cli.context.tokens import TokenCounter
    from peri_cli.extensions.hooks import SessionStartSource
    from peri_cli.session.transcript import MessageEntry
    from peri_cli.tui.agent_board import AgentBoard
    from peri_cli.tui.bridge import Bridge
    from peri_cli.tui.screens.session_picker import PickResult
    from peri_cli.tui.slash import SlashCommands

QUIT_WINDOW = 2.0  # seconds within which a second Ctrl+C quits
ESC_ESC_WINDOW = 0.8  # seconds within which a second Esc on an empty idle prompt opens /rewind
LONG_TURN = 30.0  # seconds: a turn longer than this rings when it ends
# Shift+Tab's cycle; bypass joins it only when Peri was started in it.
MODE_CYCLE = ("default", "accept-edits", "plan")
MIN_CONVERSATION = 2  # rows of conversation an approval leaves in view


class PeriApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "Peri"
    AUTO_FOCUS = "#prompt"
    ENABLE_COMMAND_PALETTE = False
    # The one key table of the TUI (`slash.KEYS` says it in /help, the README repeats it).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Cancel · twice quits", priority=True),
        Binding("escape", "escape", "Back", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True),
        Binding("pagedown", "page(1)", "Page down", show=False, priority=True),
        Binding("ctrl+end", "bottom", "Bottom", show=False, priority=True),
        Binding("ctrl+o", "toggle_folds", "Folds", priority=True),
        Binding("ctrl+l", "redraw", "Redraw"),
        Binding("ctrl+down", "agents_strip", "SubAgents", show=False, priority=True),
        Binding("ctrl+up", "focus_approval", "Approval", show=False, priority=True),
        Binding("down", "agents_strip_from_prompt", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", "Mode", show=False, priority=True),
        Binding("ctrl+r", "search_history", "History", show=False, priority=True),
    ]

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
    ) -> None:
        """`runtime` may be a function building it: it is then called in a thread once the
        first frame is drawn (a `StartupError` from it ends the app with its message).
        `freeze_gc`: the app owns the process (`run_tui`), see `_attach_runtime`."""
        super().__init__()
        self._freeze_gc = freeze_gc
        self.slot = RuntimeSlot(runtime)
        self.first_prompt = prompt
        self.clock = clock
        self._counter = counter
        self._estimator: TokenCounter | None = None
        self._history = history
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
        self.agent_strip = AgentStrip(clock, id="agent-strip")
        self.agents_ui = AgentsUI(self)  # the attached session's SubAgents
        self._bridge: Bridge | None = None
        self._commands: SlashCommands | None = None
        self.queue: list[str] = []
        self.turn: asyncio.Task[None] | None = None
        self._quit_armed = 0.0
        self._dispatching = False
        self._attaching = False  # showing a session (its SessionStart hooks start a turn)
        self._warned = 0
        self._closing = False
        self._escaped = 0.0  # when Esc last did nothing (a second one soon opens /rewind)
        self._focused = True  # the terminal has focus (as far as it reports focus changes)
        self._bypass_cycle: bool | None = None  # started in bypass: Shift+Tab may return to it
        self.notifications: list[str] = []  # what was sent to the terminal as a notification
        self.long_turn = long_turn  # seconds: a longer turn notifies when it ends

    def compose(self) -> ComposeResult:
        yield self.conversation
        yield self.approvals
        yield self.prompt_area
        yield self.agent_strip
        yield self.status
        yield Footer()

    # what is built with the runtime

    @property
    def ready(self) -> bool:
        """The runtime is built and attached: prompts and commands can run."""
        return self._bridge is not None

    @property
    def runtime(self) -> SessionHost:
        assert self.slot.runtime is not None, "the runtime is built after the first frame"
        return self.slot.runtime

    @property
    def bridge(self) -> Bridge:
        assert self._bridge is not None
        return self._bridge

    @property
    def commands(self) -> SlashCommands:
        assert self._commands is not None
        return self._commands

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
        return (
            not self.ready
            or self._attaching
            or self._dispatching
            or (self.turn is not None and not self.turn.done())
        )

    async def on_mount(self) -> None:
        self._install_exit_signals()
        if self.slot.pending or (self.slot.runtime and self.slot.runtime.trust_pending):
            self.status.busy("starting")
            self.call_after_refresh(lambda: self.run_worker(self._start(), group="start"))
            return
        await self._attach_runtime(self.runtime)
        self._next()

    async def _start(self) -> None:
        try:
            runtime = self.slot.runtime or await self.slot.build()
            from peri_cli.tui.screens.trust_dialog import settle_trust  # the core is loaded now

            await settle_trust(self, runtime)  # before the session: it decides mode and guides
        except Exception as e:
            from peri_cli.agent.host import StartupError

            if not isinstance(e, StartupError):
                raise
            from rich.text import Text

            from peri_cli.base.textsafe import visible

            self.exit(return_code=e.exit_code, message=Text(visible(f"peri: error: {e}")))
            return
        from peri_cli.tui.completion import WorkspaceFiles

        self.history = self._history or PromptHistory(runtime.peri_home / HISTORY_FILE)
        files = WorkspaceFiles(runtime.workspace)
        self.prompt_area.attach(self.history, files, str(runtime.workspace))
        await self._attach_runtime(runtime)
        # the invitation to type shows with the session, notices and status (in one frame)
        self.status.idle()
        self.prompt_area.input.placeholder = PLACEHOLDER
        self._next()  # what was typed and sent while starting

    async def _attach_runtime(self, runtime: SessionHost) -> None:
        """Attach the built runtime and show its session; what was sent meanwhile waits (busy)
        until the session and its SessionStart hooks are under way."""
        self._attaching = True
        try:
            await self._show_runtime(runtime)
        finally:
            self._attaching = False

    async def _show_runtime(self, runtime: SessionHost) -> None:
        from peri_cli.tui.bridge import Bridge
        from peri_cli.tui.slash import SlashCommands

        self.conversation.workspace = runtime.workspace
        self._bridge = Bridge(
            self.conversation,
            self.status,
            self.cost_of,
            approvals=self.approvals,
            workspace=runtime.workspace,
            interruption=self._interruption,
            summary=self._last_summary,
            on_ask=self.offer_approval,
        )
        self._commands = SlashCommands(self)
        self._attach_extensions()
        if self._bypass_cycle is None:
            self._bypass_cycle = runtime.mode == "bypass"
        if self._freeze_gc:
            # What start-up built (modules, Textual, the core) lives as long as the process:
            # keep it out of the full garbage collections, which otherwise scan it all and
            # stall frames by ~100 ms while a long reply streams. (Cyclic garbage frozen with
            # it is never freed: start-up leaves little.)
            self.call_after_refresh(gc.freeze)
        if runtime.session is None:
            await self._startup_notices()
            await self.open_picker()
            return
        await self.show_session()
        self._first_prompt()

    def _first_prompt(self) -> None:
        """`peri "PROMPT"`: sent once, as soon as a session is attached."""
        if self.first_prompt:
            prompt, self.first_prompt = self.first_prompt, None
            self.submit(prompt)

    async def _startup_notices(self) -> None:
        from peri_cli.tui.notices import startup_notices

        for text, level in startup_notices(self.runtime, self._warned):
            await self.notice(text, level)
        self._warned = len(self.runtime.warnings)  # each warning once, even across switches

    # sessions

    async def show_session(self, *, rerender: bool = True, attached: bool = True) -> None:
        """Show the attached session: its history (newest page), guide and status; a session
        just `attached` also runs its SessionStart hooks (not one shown again, e.g. /rewind)."""
        from peri_cli.tui.bridge import add_cost
        from peri_cli.tui.items import display_items
        from peri_cli.tui.notices import session_usage

        session = self.agent.session
        self.agents_ui.follow()
        if rerender:
            await self.conversation.show_items(display_items(session.entries))
            await self._startup_notices()
        self.refresh_status()
        cost, share = session_usage(session.entries, self.agent.model)
        # (a resumed session's children are read later, and add theirs then)
        self.status.set(cost_usd=add_cost(cost, self.agents_ui.cost()), cache_share=share)
        self.run_worker(self._estimate_context(), group="estimate", exclusive=True)
        if attached:
            await self.session_start(self.runtime.session_source)

    async def _estimate_context(self) -> None:
        from peri_cli.tui.context import estimate_request

        agent, shown = self.agent, self.status.status.context_tokens
        estimate = await asyncio.to_thread(estimate_request, agent, self.estimator)
        # a figure reported meanwhile (a reply's usage, a compaction) is newer than this one
        if agent is self.runtime.agent and self.status.status.context_tokens == shown:
            self.status.set(context_tokens=estimate, context_estimated=True)

    def refresh_status(self) -> None:
        r = self.runtime
        self.status.set(
            model=self.agent.model if r.agent else r.model,
            provider=r.provider_name,
            mode=self.agent.policy.mode if r.agent else r.mode,
            window=r.context_window,
        )

    async def open_picker(self) -> None:
        from peri_cli.tui.screens.session_picker import SessionPicker

        infos = await asyncio.to_thread(self.runtime.store.list)
        current = self.runtime.session.id if self.runtime.session else None
        if not infos and current is None:
            self.runtime.start_new()
            await self.show_session()
            await self.notice("No sessions to resume in this workspace yet: this is a new one.")
            self._first_prompt()
            return
        picker = SessionPicker(infos, now=self.clock(), current=current)
        await self.push_screen(picker, callback=self._picked)

    async def _picked(self, result: PickResult | None) -> None:
        if result is None:
            if self.runtime.session is None:  # `peri -r` and nothing picked: a new session
                self.runtime.start_new()
                await self.show_session()
                self._first_prompt()
            return
        if not result.fork and self.runtime.session and result.session_id == self.agent.session.id:
            await self.notice("That is the current session.")
            return
        if await self.switch_session(result.session_id, fork=result.fork):
            verb = "Forked" if result.fork else "Resumed"
            await self.notice(f"{verb} session {self.agent.session.id[:8]}")
            self._first_prompt()

    async def switch_session(self, session_id: str, *, fork: bool, rerender: bool = True) -> bool:
        from peri_cli.agent.host import StartupError

        try:
            self.runtime.start_existing(session_id, fork=fork)
        except StartupError as e:
            await self.notice(str(e), "error")
            return False
        self.status.set(context_tokens=None, cache_share=None, cost_usd=0.0)
        await self.show_session(rerender=rerender)
        return True

    # prompts, commands and turns

    def _interruption(self) -> str | None:
        """What the loop recorded for the model about the turn that just stopped, if anything."""
        agent = self.runtime.agent
        note = getattr(agent, "last_interruption", None) if agent is not None else None
        return note if isinstance(note, str) and note.strip() else None

    def _last_summary(self) -> str:
        """The summary the last Full compact wrote (shown under its separator)."""
        from peri_cli.tui.items import summary_text

        agent = self.runtime.agent
        return summary_text(agent.session.entries) if agent is not None else ""

    def cost_of(self, usage: Usage) -> float | None:
        from peri_cli.base.models import cost_usd

        return cost_usd(self.agent.model, usage)

    async def notice(self, text: str, level: Level = "info") -> None:
        await self.conversation.add(NoticeLine(text, level))

    def on_prompt_area_submitted(self, event: PromptArea.Submitted) -> None:
        self.submit(event.text)

    def submit(self, text: str) -> None:
        """Run a prompt or command now, or queue it until the running turn ends."""
        from peri_cli.extensions.commands import parse_command

        invocation = parse_command(text)
        self.conversation.to_bottom()  # what is sent, and what it brings, is read at the bottom
        if self.ready and self.busy and invocation:
            from peri_cli.tui.slash import IMMEDIATE

            if invocation.command.name in IMMEDIATE:
                self.run_worker(self.commands.run(invocation), group="command")
                return
        self.queue.append(text)
        self.prompt_area.show_queued(self.queue if self.busy else [])
        self._next()

    def _next(self) -> None:
        if self.busy or not self.queue:
            return
        self._dispatching = True
        text = self.queue.pop(0)
        self.prompt_area.show_queued(self.queue)
        self.run_worker(self._dispatch_one(text), group="dispatch")

    async def _dispatch_one(self, text: str) -> None:
        try:
            await self._dispatch(text)
        finally:
            self._dispatching = False
            self._next()

    async def _dispatch(self, text: str) -> None:
        from peri_cli.extensions.commands import parse_command
        from peri_cli.tui.notices import no_key_problem

        if self.runtime.session is None:
            await self.notice("Pick a session first (or Esc for a new one).", "warning")
            return
        invocation = parse_command(text)
        if invocation is not None:
            await self.commands.run(invocation)
            return
        if text.startswith("!") and text[1:].strip():
            await self._shell(text[1:].strip())
            return
        await self.conversation.add(UserMessage(text))
        problem = no_key_problem(self.runtime)
        if problem:
            await self.notice(problem, "error")
            return
        message = await self._extension_message(text)
        if message == "":
            return  # a skill or MCP prompt that could not be had (said why)
        attached = await self._attachments(text)
        await self.run_events(self.agent.run(message or text, attached), prompt_turn=True)

    async def _shell(self, command: str) -> None:
        """`!command`: run it in the workspace as the user (no approval); the model sees the
        command and its output on its next turn."""
        from peri_cli.agent.usershell import user_shell

        await self.conversation.add(UserMessage(f"!{command}"))
        await self.run_events(user_shell(self.agent, command), "running your command")

    async def _attachments(self, text: str) -> MessageEntry | None:
        """What the prompt's `@path`s and pasted images attach; says what was left out."""
        from peri_cli.agent.attachments import AttachContext, attach, mentions

        images = self.prompt_area.images
        if not mentions(text) and "[image #" not in text:
            return None
        agent = self.agent
        ctx = AttachContext(
            workspace=self.runtime.workspace,
            read=agent.tools.get("Read"),
            tool_ctx=agent.tool_ctx,
            rules=agent.policy.rules.rules,
            rule_ctx=agent.policy.context(),
        )
        found = await attach(text, ctx, images)
        if found.attached:
            await self.notice("Attached " + ", ".join(f"@{p}" for p in found.attached))
        for line in found.skipped:
            await self.notice(line, "warning")
        return found.entry()

    async def run_events(
        self, events: AsyncIterator[Event], activity: str = "thinking", *, prompt_turn: bool = False
    ) -> None:
        """Start consuming a turn (or compaction) in the background; Ctrl+C cancels it.
        `prompt_turn`: a turn of the loop, which records a note when it is stopped."""
        self.status.busy(activity)
        self.turn = asyncio.create_task(self._consume(events, prompt_turn))

    async def _consume(self, events: AsyncIterator[Event], prompt_turn: bool) -> None:
        from peri_cli.tui.items import display_items

        started = time.monotonic()
        try:
            await self.bridge.run(events, with_note=prompt_turn)
        finally:
            self.turn = None
            if prompt_turn and time.monotonic() - started >= self.long_turn and not self._closing:
                self.notify_user("Peri finished a turn")
            if self.is_running and not self._closing:
                self.status.idle()
                if self.approvals.pending is None:  # (a SubAgent's question keeps the keys)
                    self.prompt_area.input.focus()
                if self.conversation.overgrown:  # a long live session: keep the newest page
                    await self.conversation.show_items(display_items(self.agent.session.entries))
                self._next()
                self.wake_parent()

    async def on_unmount(self) -> None:
        """Quitting mid-turn cancels it cleanly, so the transcript holds no half turn."""
        self._closing = True
        self._remove_exit_signals()
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.turn
        await self.agents_ui.stop_all()

    # extensions: skills and MCP prompts as commands, SessionStart hooks, new project servers

    def extra_commands(self) -> list[ExtraCommand]:
        """The slash commands of skills the user may run and of the MCP servers' prompts."""
        from peri_cli.agent.host import ExtraCommand

        if not self.ready:
            return []
        skills = [
            ExtraCommand(s.name, s.argument_hint, s.description, "skill")
            for s in self.runtime.skills.for_user()
        ]
        return [*skills, *self.runtime.mcp_prompt_commands()]

    def _attach_extensions(self) -> None:
        """Complete skills and MCP prompts after `/`; ask about project servers added since the
        workspace was trusted."""
        files = self.prompt_area.files
        if files is not None:
            files.commands = self.extra_commands
        if self.runtime.server_questions():
            self.run_worker(self._ask_new_servers(), group="servers")

    async def _ask_new_servers(self) -> None:
        from peri_cli.tui.screens.server_question import ask_new_servers

        for line in await ask_new_servers(self, self.runtime):
            await self.notice(line, "warning")

    async def _extension_message(self, text: str) -> str | None:
        """What `/<skill> [args]` or `/mcp__<server>__<prompt> [args]` sends the model; None when
        `text` is neither (it goes as typed); "" when it could not be had (a notice says why)."""
        if not text.startswith("/"):
            return None
        from peri_cli.agent.host import CommandError
        from peri_cli.extensions.skills.catalog import SkillError
        from peri_cli.extensions.skills.invocation import invoke_user_skill

        try:
            invocation = invoke_user_skill(self.runtime.skills, text.strip())
            if invocation is not None:  # its allowed-tools are pre-approved for this turn
                skill = invocation.skill
                self.agent.policy.grant_for_turn(skill.allowed_tools, skill.scope == "project")
                return invocation.message
            if text.startswith("/mcp__"):
                self.status.busy("getting the MCP prompt")
            return await self.runtime.expand_mcp_prompt(text)
        except (SkillError, CommandError) as e:
            self.status.idle()
            await self.notice(str(e), "error")
            return ""

    async def session_start(self, source: SessionStartSource) -> None:
        """Run the SessionStart hooks as a turn of their own, so that a prompt sent meanwhile
        waits for their context (which the next prompt carries to the model)."""
        from peri_cli.agent.sessionstart import has_session_start, session_start_events

        agent = self.runtime.agent
        if agent is None or not has_session_start(agent.hooks):
            return
        if self.turn is not None and not self.turn.done():
            await asyncio.wait({self.turn})
        await self.run_events(session_start_events(agent, source), "running SessionStart hooks")

    # ending on SIGTERM and SIGHUP

    def _install_exit_signals(self) -> None:
        """SIGTERM and SIGHUP end the app the normal way, so the session is closed and no MCP
        server outlives Peri (only the main thread's loop can take signals)."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self._exit_on_signal, signum)

    def _remove_exit_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGHUP):
                with contextlib.suppress(NotImplementedError, ValueError):
                    loop.remove_signal_handler(signum)

    def _exit_on_signal(self, signum: int) -> None:
        self.exit(return_code=128 + signum)

    # keys

    async def on_permission_prompt_answered(self, event: PermissionPrompt.Answered) -> None:
        await self.approvals.close(event.prompt)  # (the bridge records the answer in its place)
        waiting = self.approvals.pending
        if waiting is None:
            self.prompt_area.input.focus()
        else:  # the next question (another SubAgent's) gets the keys now
            self.offer_approval(waiting)
            self.call_after_refresh(self.fit_approval)

    def on_resize(self, _event: events.Resize) -> None:
        self.call_after_refresh(self.fit_approval)

    def offer_approval(self, prompt: PermissionPrompt) -> None:
        """A new approval takes the keyboard, unless the user is typing a message: a keystroke
        meant for the prompt must never answer it (`a` would allow a rule for the session)."""
        if self.approvals.pending is not prompt:
            return  # an earlier one waits first; this one gets the keys when its turn comes
        typing = self.focused is self.prompt_area.input and bool(self.prompt_area.text.strip())
        if not typing:
            prompt.focus()
            return
        from peri_cli.base.textsafe import visible

        who = f"{prompt.agent} asks" if prompt.agent else "Peri asks"
        self.notify(
            visible(f"{who} to use {prompt.tool}: Ctrl+↑ answers, Esc denies"),
            timeout=8,
            markup=False,
        )

    def action_focus_approval(self) -> None:
        pending = self.approvals.pending
        if pending is not None:
            pending.focus()

    def on_approval_dock_asked(self, _event: ApprovalDock.Asked) -> None:
        self.call_after_refresh(self.fit_approval)
        if not self._focused:
            self.notify_user("Peri is waiting for your approval")

    # notifications

    def on_app_blur(self, _event: events.AppBlur) -> None:
        self._focused = False

    def on_app_focus(self, _event: events.AppFocus) -> None:
        self._focused = True

    def notify_user(self, text: str) -> None:
        """Ring the bell and send an OSC 9 notification (`notifications: false` turns it
        off). `text` is Peri's own fixed words, never model text."""
        if self.slot.runtime is None or not self.runtime.settings.notifications:
            return
        self.notifications.append(text)
        self.bell()
        driver = self._driver
        if driver is not None and text.isprintable() and "\x1b" not in text:
            driver.write(f"\x1b]9;{text}\x07")

    def fit_approval(self) -> None:
        """A pending approval takes the room the rest leaves, so its question stays on screen."""
        prompt = self.approvals.pending
        if prompt is None or not self.is_running:
            return
        others = sum(
            w.outer_size.height for w in (self.prompt_area, self.status) if w.display
        ) + sum(1 for _ in self.query(Footer))
        others += self.agent_strip.wanted_height  # (its size may not be laid out yet)
        prompt.fit(self.size.height - others - MIN_CONVERSATION - prompt.styles.margin.height)

    # keys

    def on_key(self, event: events.Key) -> None:
        """Printable keys always reach the prompt, whatever has focus (a fold, a record)."""
        prompt = self.prompt_area.input
        if (
            event.is_printable
            and event.character
            and not self.screen.is_modal
            and self.focused is not prompt
            and not isinstance(self.focused, PermissionPrompt)
        ):
            event.stop()
            event.prevent_default()
            prompt.focus()
            prompt.insert(event.character)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action.startswith("agents_"):
            return self._agents_key_allowed(action)
        if action == "focus_approval":
            return self.approvals.pending is not None and not self.screen.is_modal
        # on a popup screen its own keys act (the picker pages its list)
        modal_keys = ("page", "bottom", "toggle_folds", "cycle_mode", "search_history")
        return not (action in modal_keys and self.screen.is_modal)

    async def action_escape(self) -> None:
        """Esc, first match wins: close a popup or menu; deny a pending approval; return focus
        to the prompt; interrupt the running turn. It never clears typed text."""
        pending = self.approvals.pending
        if self.screen.is_modal:
            self.screen.dismiss(None)
        elif self.prompt_area.close_menu():
            pass
        elif pending is not None:
            pending.action_answer("deny")
        elif self.focused is not self.prompt_area.input:
            self.prompt_area.input.focus()
        elif self.turn is not None and not self.turn.done():
            self._cancel_turn()
        else:
            await self._escape_twice()

    async def _escape_twice(self) -> None:
        """Esc Esc on an empty prompt while idle opens /rewind."""
        if self.busy or self.prompt_area.text or self.runtime.session is None:
            self._escaped = 0.0
            return
        now = time.monotonic()
        if now - self._escaped > ESC_ESC_WINDOW:
            self._escaped = now
            return
        self._escaped = 0.0
        await self.commands.cmd_rewind("")

    def action_cycle_mode(self) -> None:
        """Shift+Tab: default -> accept-edits -> plan -> (bypass, if started in it) -> default."""
        if self.screen.is_modal or not self.ready or self.runtime.agent is None:
            return
        if self._bypass_cycle is None:
            self._bypass_cycle = self.runtime.mode == "bypass"
        cycle = [*MODE_CYCLE, *(["bypass"] if self._bypass_cycle else [])]
        current = self.agent.policy.mode
        following = cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else cycle[0]
        self.runtime.mode = self.agent.policy.mode = following  # type: ignore[assignment]
        self.refresh_status()

    async def action_search_history(self) -> None:
        """Ctrl+R: search the prompt history; the chosen prompt replaces what is typed."""
        from peri_cli.tui.screens.history_search import HistorySearch

        if self.screen.is_modal:
            return

        def chosen(text: str | None) -> None:
            if text is not None:
                self.prompt_area.set_text(text)
            self.prompt_area.input.focus()

        screen = HistorySearch(self.history, self.prompt_area.workspace, self.prompt_area.text)
        await self.push_screen(screen, callback=chosen)

    def action_page(self, pages: int) -> None:
        pending = self.approvals.pending
        if pending is not None:
            pending.scroll_page(pages)
        elif pages < 0:
            self.conversation.scroll_page_up(animate=False)
        else:
            self.conversation.scroll_page_down(animate=False)

    def action_bottom(self) -> None:
        pending = self.approvals.pending
        if pending is not None:
            pending.scroll_body(end=True)
        self.conversation.to_bottom()

    def action_toggle_folds(self) -> None:
        self.conversation.toggle_folds()

    def _cancel_turn(self) -> None:
        """Stop the running turn; what was queued behind it goes back into the prompt (typed
        text is never lost), not to the model."""
        if self.turn is not None and not self.turn.done():
            if self.queue:
                typed = self.prompt_area.text
                self.prompt_area.set_text("\n".join([*self.queue, *([typed] if typed else [])]))
                self.queue.clear()
            self.prompt_area.show_queued(self.queue)
            self.turn.cancel()

    async def action_interrupt(self) -> None:
        if self.screen.is_modal:
            self.screen.dismiss(None)
        elif self.prompt_area.close_menu():
            pass
        elif self.turn is not None and not self.turn.done():
            self._cancel_turn()
        elif self.prompt_area.text:
            self.prompt_area.clear()
        elif time.monotonic() - self._quit_armed < QUIT_WINDOW:
            self.exit(0)
        else:
            self._quit_armed = time.monotonic()
            self.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)

    def action_redraw(self) -> None:
        self.screen.refresh(layout=True)
        self.refresh(repaint=True, layout=True)

    # SubAgents: the strip's keys and messages; their reports wake the parent (the rest is in
    # `agents_ui.AgentsUI`)

    @property
    def agent_board(self) -> AgentBoard | None:
        return self.agents_ui.board

    async def open_agent_pane(self, child_id: str) -> None:
        await self.agents_ui.open_pane(child_id)

    @property
    def quitting(self) -> bool:
        """Quitting: nothing is left to draw on, and a question asked now is denied."""
        return self._closing or not self.screen_stack

    def wake_parent(self) -> None:
        """Background SubAgents' reports wake the idle parent: a turn with no prompt reads
        them. While the user is typing they wait and go with the next message."""
        if not self.ready or self.busy or self.queue or self._closing or not self.is_running:
            return
        agent = self.runtime.agent
        if agent is None or not agent.report_waiting or self.prompt_area.text.strip():
            return
        self._dispatching = True
        self.run_worker(self._wake(agent), group="dispatch")

    async def _wake(self, agent: Agent) -> None:
        from peri_cli.agent.loop import REPORT_HEAD

        try:
            for report in agent.inbox:
                if report.startswith(REPORT_HEAD):
                    head = report.split("\n", 1)[0].strip("[] ")
                    await self.notice(f"{head} Its report goes to the agent.")
            await self.run_events(agent.run(None), prompt_turn=True)
        finally:
            self._dispatching = False

    def on_agent_strip_open(self, message: AgentStrip.Open) -> None:
        self.run_worker(self.agents_ui.open_pane(message.child_id), group="pane")

    def on_agent_strip_stop(self, message: AgentStrip.Stop) -> None:
        if self.agents_ui.stop_child(message.child_id):
            self.notify("Stopping the SubAgent (its transcript is kept)", timeout=2, markup=False)

    def on_agent_strip_leave(self, _message: AgentStrip.Leave) -> None:
        self.prompt_area.input.focus()

    def _agents_key_allowed(self, action: str) -> bool:
        """Ctrl+↓ focuses the strip while it shows; ↓ does too, from an empty prompt only (else
        it moves in the prompt, its menu or its history)."""
        if not self.agent_strip.display or self.screen.is_modal:
            return False
        if action == "agents_strip_from_prompt":
            return (
                self.focused is self.prompt_area.input
                and not self.prompt_area.text
                and not self.prompt_area.menu.is_open
            )
        return True

    def action_agents_strip(self) -> None:
        self.agent_strip.focus()

    def action_agents_strip_from_prompt(self) -> None:
        self.agent_strip.focus()


def run_tui(runtime: SessionHost | Callable[[], SessionHost], prompt: str | None) -> int:
    """Run the TUI on a runtime, or on a function building one (after the first frame)."""
    app = PeriApp(runtime, prompt, freeze_gc=True)
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
