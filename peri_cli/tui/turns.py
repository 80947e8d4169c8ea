"""Prompts, commands and turns: what is sent runs now or waits in the queue; a slash command runs
its handler, `!command` the user's shell, a prompt (with its `@path` attachments, or a skill's or
MCP prompt's text) a turn of the agent, whose events the bridge draws. Background SubAgents'
reports wake the idle parent."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from peri_cli.tui.widgets.user_message import UserMessage

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent
    from peri_cli.base.events import Event
    from peri_cli.extensions.custom_commands.catalog import CustomCommand
    from peri_cli.extensions.hooks import SessionStartSource
    from peri_cli.session.transcript import MessageEntry
    from peri_cli.tui.bridge import Bridge
    from peri_cli.tui.ports import AppPort


class Turns:
    """The queue and the running turn."""

    def __init__(
        self,
        app: AppPort,
        bridge: Callable[[], Bridge],
        *,
        long_turn: float,
        closing: Callable[[], bool],
    ) -> None:
        self.app = app
        self._bridge = bridge
        self.long_turn = long_turn  # seconds: a longer turn notifies when it ends
        self._closing = closing
        self.queue: list[str] = []
        self.turn: asyncio.Task[None] | None = None
        self.dispatching = False
        self._mistyped: str | None = None  # a `/word` near a command, asked about once

    @property
    def running(self) -> bool:
        return self.turn is not None and not self.turn.done()

    def submit(self, text: str) -> None:
        """Run a prompt or command now, or queue it until the running turn ends."""
        from peri_cli.extensions.commands import parse_command

        app = self.app
        invocation = parse_command(text)
        app.conversation.to_bottom()  # what is sent, and what it brings, is read at the bottom
        if app.ready and app.busy and invocation:
            from peri_cli.tui import commands

            if commands.immediate(invocation):
                app.run_worker(commands.run(app, invocation), group="command")
                return
        self.queue.append(text)
        app.prompt_area.show_queued(self.queue if app.busy else [])
        self.next()

    def next(self) -> None:
        if self.app.busy or not self.queue:
            return
        self.dispatching = True
        text = self.queue.pop(0)
        self.app.prompt_area.show_queued(self.queue)
        self.app.run_worker(self._dispatch_one(text), group="dispatch")

    async def _dispatch_one(self, text: str) -> None:
        try:
            await self._dispatch(text)
        finally:
            self.dispatching = False
            self.next()

    async def _dispatch(self, text: str) -> None:
        from peri_cli.extensions.commands import parse_command
        from peri_cli.tui.notices import no_key_problem

        app = self.app
        if app.runtime.session is None:
            await app.notice("Pick a session first (or Esc for a new one).", "warning")
            return
        invocation = parse_command(text)
        if invocation is not None:
            from peri_cli.tui import commands

            await commands.run(app, invocation)
            return
        if text.startswith("!") and text[1:].strip():
            await self._shell(text[1:].strip())
            return
        if await self._asked_if_mistyped(text):
            return
        await app.conversation.add(UserMessage(text))
        problem = no_key_problem(app.runtime)
        if problem:
            await app.notice(problem, "error")
            return
        message = await self._extension_message(text)
        if message == "":
            return  # a skill or MCP prompt that could not be had (said why)
        if message is None and (custom := app.runtime.custom_commands.find(text.strip())):
            await self.run_events(self._custom(*custom), prompt_turn=True)
            return
        attached = await self._attachments(text)
        await self.run_events(app.agent.run(message or text, attached), prompt_turn=True)

    async def _asked_if_mistyped(self, text: str) -> bool:
        """`/comapct`: put it back in the prompt and ask "did you mean /compact?" instead of
        sending it; the same text sent again right away goes to the model as typed."""
        from peri_cli.tui.completion import near_command

        app = self.app
        files = app.prompt_area.files
        meant = near_command(text, files.commands() if files else ())
        if meant is None or self._mistyped == text:
            self._mistyped = None
            return False
        self._mistyped = text
        if not app.prompt_area.text:
            app.prompt_area.set_text(text)
        word = text.split(maxsplit=1)[0]
        await app.notice(
            f"{word} is not a command. Did you mean /{meant}? "
            "(Enter again sends it to the model as typed.)",
            "warning",
        )
        return True

    async def _shell(self, command: str) -> None:
        """`!command`: run it in the workspace as the user (no approval); the model sees the
        command and its output on its next turn."""
        from peri_cli.agent.usershell import user_shell

        await self.app.conversation.add(UserMessage(f"!{command}"))
        await self.run_events(user_shell(self.app.agent, command), "running your command")

    def _custom(self, command: CustomCommand, arguments: str) -> AsyncIterator[Event]:
        """A custom command's turn: its `!` lines (asked about as Bash calls), its `@path`s,
        then the model on its text."""
        from peri_cli.agent.custom_command import command_turn

        app = self.app
        return command_turn(
            app.agent,
            command,
            arguments,
            workspace=app.runtime.workspace,
            provider=app.runtime.provider_name,
            images=app.prompt_area.images,
        )

    async def _attachments(self, text: str) -> MessageEntry | None:
        """What the prompt's `@path`s and pasted images attach; says what was left out."""
        from peri_cli.agent.attachments import AttachContext, attach, mentions

        app = self.app
        images = app.prompt_area.images
        if not mentions(text) and "[image #" not in text:
            return None
        agent = app.agent
        ctx = AttachContext.of(agent, app.runtime.workspace)
        found = await attach(text, ctx, images)
        if found.attached:
            await app.notice("Attached " + ", ".join(f"@{p}" for p in found.attached))
        for line in found.skipped:
            await app.notice(line, "warning")
        return found.entry()

    async def _extension_message(self, text: str) -> str | None:
        """What `/<skill> [args]` or `/mcp__<server>__<prompt> [args]` sends the model; None when
        `text` is neither (it goes as typed); "" when it could not be had (a notice says why)."""
        if not text.startswith("/"):
            return None
        from peri_cli.agent.host import CommandError
        from peri_cli.extensions.skills.catalog import SkillError
        from peri_cli.extensions.skills.invocation import invoke_user_skill

        app = self.app
        try:
            invocation = invoke_user_skill(app.runtime.skills, text.strip())
            if invocation is not None:  # its allowed-tools are pre-approved for this turn
                skill = invocation.skill
                app.agent.policy.grant_for_turn(skill.allowed_tools, skill.scope == "project")
                return invocation.message
            if text.startswith("/mcp__"):
                app.status.busy("getting the MCP prompt")
            return await app.runtime.expand_mcp_prompt(text)
        except (SkillError, CommandError) as e:
            app.status.idle()
            await app.notice(str(e), "error")
            return ""

    # the running turn

    async def run_events(
        self, events: AsyncIterator[Event], activity: str = "thinking", *, prompt_turn: bool = False
    ) -> None:
        """Start consuming a turn (or compaction) in the background; Ctrl+C cancels it.
        `prompt_turn`: a turn of the loop, which records a note when it is stopped."""
        self.app.status.busy(activity)
        self.turn = asyncio.create_task(self._consume(events, prompt_turn))

    async def _consume(self, events: AsyncIterator[Event], prompt_turn: bool) -> None:
        from peri_cli.tui.items import display_items

        app = self.app
        started = time.monotonic()
        try:
            await self._bridge().run(events)
        finally:
            self.turn = None
            if prompt_turn and time.monotonic() - started >= self.long_turn and not self._closing():
                app.notify_user("Peri finished a turn")
            if app.is_running and not self._closing():
                app.status.idle()
                if app.approvals.pending is None:  # (a SubAgent's question keeps the keys)
                    app.prompt_area.input.focus()
                if app.conversation.overgrown:  # a long live session: keep the newest page
                    await app.conversation.show_items(display_items(app.agent.session.entries))
                self.next()
                self.wake_parent()

    def cancel(self) -> None:
        """Stop the running turn; what was queued behind it goes back into the prompt (typed
        text is never lost), not to the model."""
        if self.turn is not None and not self.turn.done():
            prompt_area = self.app.prompt_area
            if self.queue:
                typed = prompt_area.text
                prompt_area.set_text("\n".join([*self.queue, *([typed] if typed else [])]))
                self.queue.clear()
            prompt_area.show_queued(self.queue)
            self.turn.cancel()

    async def stop(self) -> None:
        """Quitting mid-turn cancels it cleanly, so the transcript holds no half turn."""
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.turn

    async def session_start(self, source: SessionStartSource) -> None:
        """Run the SessionStart hooks as a turn of their own, so that a prompt sent meanwhile
        waits for their context (which the next prompt carries to the model)."""
        from peri_cli.agent.sessionstart import has_session_start, session_start_events

        agent = self.app.runtime.agent
        if agent is None or not has_session_start(agent.hooks):
            return
        if self.turn is not None and not self.turn.done():
            await asyncio.wait({self.turn})
        await self.run_events(session_start_events(agent, source), "running SessionStart hooks")

    # SubAgents' reports

    def wake_parent(self) -> None:
        """Background SubAgents' reports wake the idle parent: a turn with no prompt reads
        them. While the user is typing they wait and go with the next message."""
        app = self.app
        if not app.ready or app.busy or self.queue or self._closing() or not app.is_running:
            return
        agent = app.runtime.agent
        if agent is None or not agent.report_waiting or app.prompt_area.text.strip():
            return
        self.dispatching = True
        app.run_worker(self._wake(agent), group="dispatch")

    async def _wake(self, agent: Agent) -> None:
        from peri_cli.agent.loop import REPORT_HEAD

        try:
            for report in agent.inbox:
                if report.startswith(REPORT_HEAD):
                    head = report.split("\n", 1)[0].strip("[] ")
                    await self.app.notice(f"{head} Its report goes to the agent.")
            await self.run_events(agent.run(None), prompt_turn=True)
        finally:
            self.dispatching = False
