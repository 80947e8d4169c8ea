"""Attaching the runtime and showing sessions: the start after the first frame (trust first),
the bridge and the extensions wired to the attached runtime, the session picker, switching and
forking, the status line's model, mode, cost and context estimate, and the configured status
line under the prompt (`statusline_ui`), which follows the session shown."""

from __future__ import annotations

import asyncio
import functools
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

from peri_cli.tui.history import HISTORY_FILE, PromptHistory
from peri_cli.tui.questions_ui import ask_question
from peri_cli.tui.statusline_ui import StatusLineUI
from peri_cli.tui.widgets.prompt_input import PLACEHOLDER

GC_THRESHOLDS = (10_000, 2, 10)  # the TUI process's (bench/README.md, *A SubAgent's pane*)

if TYPE_CHECKING:
    from peri_cli.agent.host import ExtraCommand, SessionHost
    from peri_cli.session.store import Session
    from peri_cli.tui.agents_ui import AgentsUI
    from peri_cli.tui.bridge import Bridge
    from peri_cli.tui.ports import AppPort
    from peri_cli.tui.screens.session_picker import PickResult
    from peri_cli.tui.startup import RuntimeSlot


def whole_cost(session: Session, model: str) -> float | None:
    """What every reply of the session's record cost (None: a model without a known price)."""
    from peri_cli.session.costs import spend_of
    from peri_cli.session.rewind import record

    return spend_of(record(session), model).usd


class Sessions:
    """What is built with the runtime, and which session the app shows."""

    def __init__(
        self,
        app: AppPort,
        slot: RuntimeSlot,
        agents: AgentsUI,
        *,
        history: PromptHistory | None,
        first_prompt: str | None,
        freeze_gc: bool,
        on_attached: Callable[[SessionHost], None],
    ) -> None:
        self.app = app
        self.slot = slot
        self.agents = agents
        self.first_prompt = first_prompt
        self.bridge: Bridge | None = None
        self.attaching = False  # showing a session (its SessionStart hooks start a turn)
        self._history = history
        self._freeze_gc = freeze_gc
        self._on_attached = on_attached  # the runtime's extensions, once attached
        self._warned = 0
        self.status_line = StatusLineUI(app)

    async def start(self) -> bool:
        """Build the runtime (in a thread), settle trust, then attach it; a `StartupError` ends
        the app with its message (False)."""
        app = self.app
        try:
            runtime = self.slot.runtime or await self.slot.build()
            if self._freeze_gc:
                collect_again()  # (not later: a trust question may wait for minutes)
            from peri_cli.tui.screens.trust_dialog import settle_trust  # the core is loaded now

            await settle_trust(app, runtime)  # before the session: it decides mode and guides
        except Exception as e:
            from peri_cli.agent.host import StartupError

            if not isinstance(e, StartupError):
                raise
            from rich.text import Text

            from peri_cli.base.textsafe import visible

            app.exit(return_code=e.exit_code, message=Text(visible(f"peri: error: {e}")))
            return False
        from peri_cli.tui.completion import WorkspaceFiles

        app.history = self._history or PromptHistory(runtime.peri_home / HISTORY_FILE)
        files = WorkspaceFiles(runtime.workspace)
        app.prompt_area.attach(app.history, files, str(runtime.workspace))
        await self.attach(runtime)
        # the invitation to type shows with the session, notices and status (in one frame)
        app.status.idle()
        app.prompt_area.input.invite(PLACEHOLDER)
        return True

    async def attach(self, runtime: SessionHost) -> None:
        """Attach the built runtime and show its session; what was sent meanwhile waits (busy)
        until the session and its SessionStart hooks are under way."""
        self.attaching = True
        try:
            await self._show_runtime(runtime)
        finally:
            self.attaching = False

    async def _show_runtime(self, runtime: SessionHost) -> None:
        from peri_cli.tui.bridge import Bridge
        from peri_cli.tui.tool_text import look_of

        app = self.app
        app.conversation.look = look = look_of(runtime)
        self.bridge = Bridge(
            app.conversation,
            app.status,
            app.cost_of,
            approvals=app.approvals,
            look=look,
            summary=self._last_summary,
            on_ask=app.offer_approval,
            on_question=functools.partial(ask_question, app),
            todos=app.todo_strip,
        )
        self._on_attached(runtime)
        self._attach_extensions(runtime)
        if self._freeze_gc:
            # What start-up built (modules, Textual, the core) lives as long as the process:
            # keep it out of the full garbage collections, which otherwise scan it all and
            # stall frames by ~100 ms while a long reply streams. (Cyclic garbage frozen with
            # it is never freed: start-up leaves little.)
            app.call_after_refresh(gc.freeze)
            collect_again()
        if runtime.session is None:
            await self._startup_notices()
            await self.open_picker()
            return
        await self.show(attached=True)
        self.send_first_prompt()

    def _attach_extensions(self, runtime: SessionHost) -> None:
        """Complete skills and MCP prompts after `/`; ask about project servers added since the
        workspace was trusted."""
        files = self.app.prompt_area.files
        if files is not None:
            files.commands = self.extra_commands
        if runtime.server_questions():
            self.app.run_worker(self._ask_new_servers(), group="servers")
        if runtime.plugins.missing:
            self.app.run_worker(self._offer_plugins(), group="plugins")

    def extra_commands(self) -> list[ExtraCommand]:
        """The slash commands of skills the user may run, the custom commands (by the name
        that reaches each) and the MCP servers' prompts."""
        from peri_cli.agent.host import ExtraCommand

        if self.bridge is None:
            return []
        runtime = self.app.runtime
        skills = [
            ExtraCommand(s.name, s.argument_hint, s.description, "skill")
            for s in runtime.skills.for_user()
        ]
        commands = [
            ExtraCommand(r.call, c.argument_hint, c.description, "command", c.where)
            for r in runtime.custom_commands.rows()
            if (c := r.command)
        ]
        return [*skills, *commands, *runtime.mcp_prompt_commands()]

    async def _ask_new_servers(self) -> None:
        from peri_cli.tui.screens.server_question import ask_new_servers

        for line in await ask_new_servers(self.app, self.app.runtime):
            await self.app.notice(line, "warning")

    async def _offer_plugins(self) -> None:
        from peri_cli.tui.screens.plugin_question import ask_missing_plugins

        for line in await ask_missing_plugins(self.app, self.app.runtime):
            await self.app.notice(line)

    def send_first_prompt(self) -> None:
        """`peri "PROMPT"`: sent once, as soon as a session is attached."""
        if self.first_prompt:
            prompt, self.first_prompt = self.first_prompt, None
            self.app.submit(prompt)

    async def _startup_notices(self) -> None:
        from peri_cli.tui.notices import startup_notices

        runtime = self.app.runtime
        for text, level in startup_notices(runtime, self._warned):
            await self.app.notice(text, level)
        self._warned = len(runtime.warnings)  # each warning once, even across switches

    def _last_summary(self) -> str:
        """The summary the last Full compact wrote (shown under its separator)."""
        from peri_cli.tui.items import summary_text

        agent = self.app.runtime.agent
        return summary_text(agent.session.entries) if agent is not None else ""

    # the session shown

    async def show(self, *, rerender: bool = True, attached: bool = True) -> None:
        """Show the attached session: its history (newest page), guide and status; a session
        just `attached` also runs its SessionStart hooks (not one shown again, e.g. /rewind)."""
        from peri_cli.context.projection import visible_entries
        from peri_cli.context.todos import latest_todos
        from peri_cli.tui.bridge import add_cost
        from peri_cli.tui.items import display_items
        from peri_cli.tui.notices import session_usage

        app = self.app
        session = app.agent.session
        self.agents.follow()
        if rerender:
            await app.conversation.show_items(display_items(session.entries))
            await self._startup_notices()
        self.status_line.follow()
        self.refresh_status()
        app.todo_strip.show(latest_todos(visible_entries(session.entries)))
        _, share = session_usage(session.entries, app.agent.model)
        # The whole record's cost, as /cost counts it (memory holds only the visible tail);
        # a resumed session's children are read later, and add theirs then.
        cost = await asyncio.to_thread(whole_cost, session, app.agent.model)
        app.status.set(cost_usd=add_cost(cost, self.agents.cost()), cache_share=share)
        app.run_worker(self._estimate_context(), group="estimate", exclusive=True)
        if attached:
            await app.session_start(app.runtime.session_source)

    async def _estimate_context(self) -> None:
        from peri_cli.tui.context import estimate_request

        app = self.app
        agent, shown = app.agent, app.status.status.context_tokens
        estimate = await asyncio.to_thread(estimate_request, agent, app.estimator)
        # a figure reported meanwhile (a reply's usage, a compaction) is newer than this one
        if agent is app.runtime.agent and app.status.status.context_tokens == shown:
            app.status.set(context_tokens=estimate, context_estimated=True)

    def refresh_status(self) -> None:
        app, r = self.app, self.app.runtime
        app.status.set(
            model=app.agent.model if r.agent else r.model,
            provider=r.provider_name,
            mode=app.agent.policy.mode if r.agent else r.mode,
            window=r.context_window,
        )

    async def open_picker(self) -> None:
        from peri_cli.tui.screens.session_picker import SessionPicker

        app, runtime = self.app, self.app.runtime
        infos = await asyncio.to_thread(runtime.store.list)
        current = runtime.session.id if runtime.session else None
        if not infos and current is None:
            runtime.start_new()
            await self.show()
            await app.notice("No sessions to resume in this workspace yet: this is a new one.")
            self.send_first_prompt()
            return
        picker = SessionPicker(infos, now=app.clock(), current=current)
        await app.push_screen(picker, callback=self._picked)

    async def _picked(self, result: PickResult | None) -> None:
        app, runtime = self.app, self.app.runtime
        if result is None:
            if runtime.session is None:  # `peri -r` and Esc: the user changed their mind
                app.exit(0)
            return
        if not result.fork and runtime.session and result.session_id == app.agent.session.id:
            await app.notice("That is the current session.")
            return
        if await self.switch(result.session_id, fork=result.fork):
            verb = "Forked" if result.fork else "Resumed"
            await app.notice(f"{verb} session {app.agent.session.id[:8]}")
            self.send_first_prompt()

    async def switch(self, session_id: str, *, fork: bool, rerender: bool = True) -> bool:
        from peri_cli.agent.host import StartupError

        app = self.app
        try:
            app.runtime.start_existing(session_id, fork=fork)
        except StartupError as e:
            await app.notice(str(e), "error")
            return False
        app.status.set(context_tokens=None, cache_share=None, cost_usd=0.0)
        await self.show(rerender=rerender)
        return True


def collect_again() -> None:
    """The TUI process's garbage collection, resumed after start-up (`cli` pauses it until the
    runtime is built: what start-up allocates lives for the whole run, and collecting while
    Textual and the core load only cost time) with what start-up built frozen out of it."""
    gc.freeze()
    # Drawn lines (Textual's `Strip`s keep themselves in their own caches) die as cyclic
    # garbage, hundreds a frame: with the default thresholds (700, 10, 10) many are still
    # alive at a young collection, reach the full one and make it scan ~100 ms every few
    # frames while text streams. Fewer young collections let them die young.
    gc.set_threshold(*GC_THRESHOLDS)
    gc.enable()
