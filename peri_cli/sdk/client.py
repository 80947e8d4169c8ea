"""`PeriClient`, a conversation with Peri, and `query`, one prompt run to its end (CONTRACT.md §8).

Each client has its own runtime: its workspace, environment and PERI_HOME come from its options,
never from the process's current directory or `os.environ` as changed by another client, so
several clients in one event loop do not interfere."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from peri_cli.agent.host import StartupError
from peri_cli.base.events import Notice
from peri_cli.base.settings import SettingsLayer
from peri_cli.extensions.commands import parse_command
from peri_cli.extensions.skills.catalog import SkillError
from peri_cli.extensions.skills.invocation import invoke_user_skill
from peri_cli.sdk.agentdefs import agent_types
from peri_cli.sdk.asking import Asker
from peri_cli.sdk.clientviews import ClientViews
from peri_cli.sdk.composed import Runtime
from peri_cli.sdk.errors import PeriError
from peri_cli.sdk.events import PARTIAL_TYPES, Event, ResultEvent
from peri_cli.sdk.hookmatchers import program_hooks
from peri_cli.sdk.mcptools import on_running_loop
from peri_cli.sdk.netasking import network_ask
from peri_cli.sdk.options import NO_QUESTIONS, PeriOptions, peri_mode
from peri_cli.sdk.promptchoice import builtin_names, prompt_parts
from peri_cli.sdk.runtime import RunSpec, build_from_spec, mcp_layers
from peri_cli.sdk.turn import PromptRun, watch_mcp


def spec_from_options(options: PeriOptions) -> RunSpec:
    """A program's options as the run they describe."""
    env = {**os.environ, **options.env}
    if options.peri_home is not None:
        env["PERI_HOME"] = str(options.peri_home)
    workspace = Path(options.cwd if options.cwd is not None else os.getcwd())
    sources = tuple(options.setting_sources or ())
    layers = mcp_layers(on_running_loop(options.mcp_servers))
    if options.sandbox is not None:  # counted as the user's own settings, like its servers
        layers.append(
            SettingsLayer("user", Path("<PeriOptions.sandbox>"), {"sandbox": dict(options.sandbox)})
        )
    system_prompt, append = prompt_parts(options.system_prompt, options.append_system_prompt)
    return RunSpec(
        workspace=workspace.expanduser().resolve(),
        env=env,
        provider=options.provider,
        model=options.model,
        permission_mode=options.peri_mode,
        max_turns=options.max_turns,
        # a program that asks for the repository's own settings files trusts them
        trust_workspace=bool({"project", "local"} & set(sources)),
        allowed_tools=list(options.allowed_tools),
        disallowed_tools=list(options.disallowed_tools),
        cont=options.continue_conversation,
        resume=options.resume,
        fork_session=options.fork_session,
        setting_sources=sources,
        extra_layers=layers,
        system_prompt=system_prompt,
        append_system=append,
        agents=agent_types(options.agents),
        builtin_names=builtin_names(options.tools),
        files=options.files,
        hooks=program_hooks(options.hooks),
    )


class _Closed:
    """What the queue holds last once the client is closed: `receive_messages()` ends there."""


CLOSED = _Closed()


class PeriClient(ClientViews):
    """A conversation: `async with PeriClient(options) as client`, then `await client.send(p)`
    (or `query(p)`) and `async for event in client.events()` (or `receive_response()`), until
    that prompt's `result`, per prompt. Every prompt sent ends with exactly one `result`, an
    `interrupt()` at any moment included (`result.cancelled`)."""

    def __init__(self, options: PeriOptions | None = None, *, spec: RunSpec | None = None) -> None:
        """`spec` (for Peri's own faces): the run as the command line describes it, instead of
        the one the options describe; the options then give only the callback and partials."""
        self.options = options or PeriOptions()
        self._spec = spec
        self.runtime: Runtime | None = None
        self._queue: asyncio.Queue[Event | _Closed] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._asker: Asker | None = None
        self._prompts = 0
        self._unwatch: Callable[[], None] | None = None
        self._unread = 0  # prompts sent whose `result` has not been read yet
        self._started = False  # the running prompt's task has begun
        self._cancel_first = False  # interrupted before it began: it ends at once, cancelled
        self._closed = False

    async def __aenter__(self) -> PeriClient:
        await self.connect()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        """Build the run: settings, session (new, resumed or forked), agent, MCP servers."""
        if self._closed:
            raise PeriError("the client is closed (close() or disconnect()): make a new PeriClient")
        if self.runtime is not None:
            return
        try:
            spec = self._spec or spec_from_options(self.options)
            self.runtime = build_from_spec(spec)
        except StartupError as e:
            raise PeriError(str(e), e.exit_code) from e
        agent = self.runtime.agent
        assert agent is not None
        self._asker = Asker(None, agent.policy, self.session_id)
        self._set_asking(self.options.asks)
        self.runtime.sandbox_sources = spec.setting_sources  # the files it reads again on change

    def _set_asking(self, asks: bool) -> None:
        """Questions go to `can_use_tool` (a sandbox's new domain as "Network" too), or, under
        `dontAsk` or without a callback, are denied as in headless mode."""
        runtime = self._connected()
        callback = self.options.can_use_tool if asks else None
        assert self._asker is not None
        self._asker.can_use_tool = callback
        runtime.network_asker = network_ask(callback, self.session_id)

    async def send(self, prompt: str, *, images: Sequence[tuple[str, str]] = ()) -> None:
        """Start running `prompt` (blank: continue an unanswered session); `events()` streams
        it. PeriError when it cannot start (nothing to continue, no provider key, a bad skill,
        a closed client). `images`: (media type, base64 data) pairs the prompt names as
        `[image #1]`, ... ."""
        runtime = self._connected()
        agent = runtime.agent
        assert agent is not None
        if self._task is not None and not self._task.done():
            raise PeriError("the previous prompt is still running; read its events first")
        if not prompt.strip() and not agent.can_continue():
            raise PeriError(
                "-p needs a prompt (an argument or piped input): the session has nothing "
                "unanswered to continue",
                2,
                self.session_id,
            )
        if runtime.credentials_problem and parse_command(prompt) is None:
            raise PeriError(runtime.credentials_problem, 1, self.session_id)
        prompt = self._skill(prompt)
        schema = self.options.output_schema  # (options changed since: OptionError here)
        self._started, self._cancel_first = False, False
        run = self._run(prompt, tuple(images), time.monotonic(), schema)
        self._task = asyncio.create_task(run)
        self._unread += 1

    async def query(self, prompt: str, *, images: Sequence[tuple[str, str]] = ()) -> None:
        """The Claude Agent SDK's name for `send()`."""
        await self.send(prompt, images=images)

    def _skill(self, prompt: str) -> str:
        """`/skill-name args`: the skill's text is the prompt, its allowed tools granted."""
        runtime = self._connected()
        if parse_command(prompt) is not None:
            return prompt
        try:
            invocation = invoke_user_skill(runtime.skills, prompt.strip())
        except SkillError as e:
            raise PeriError(str(e), 1, self.session_id) from e
        if invocation is None:
            return prompt
        skill = invocation.skill
        assert runtime.agent is not None
        runtime.agent.policy.grant_for_turn(skill.allowed_tools, skill.scope == "project")
        return invocation.message

    async def _run(
        self,
        prompt: str,
        images: tuple[tuple[str, str], ...],
        sent: float,
        schema: dict[str, Any] | None,
    ) -> None:
        self._started = True  # from here a cancel lands inside `run.run`, which ends the turn
        runtime = self.runtime
        assert runtime is not None and self._asker is not None and runtime.agent is not None
        run = PromptRun(
            runtime,
            self._asker,
            self._queue.put_nowait,
            partial=self.options.include_partial_messages,
            schema=schema,
        )
        run.out.started = sent
        run.init_line()
        try:
            if self._cancel_first:  # interrupted before this task began
                run.out.error = "cancelled"
            else:
                first = self._prompts == 0
                self._prompts += 1
                if first:
                    self._unwatch = watch_mcp(runtime, self._queue.put_nowait)
                await run.run(prompt, first=first, images=images)
        finally:
            for notice in self._asker.notices:
                run.core(notice)
            self._asker.notices.clear()
            for line in runtime.take_sandbox_notes():  # (a domain's "always" not saved, ...)
                run.core(Notice(line, "warning"))
            self._queue.put_nowait(run.out.result_event(runtime.agent))

    async def events(self) -> AsyncIterator[Event]:
        """The prompt's events, up to and including its `result`; nothing (at once) when no
        prompt was sent whose result is unread."""
        while self._unread > 0:
            event = await self._queue.get()
            if isinstance(event, _Closed):
                return
            if isinstance(event, ResultEvent):
                self._unread -= 1
            if self.options.include_partial_messages or not _partial(event):
                yield event
            if isinstance(event, ResultEvent):
                return

    async def receive_response(self) -> AsyncIterator[Event]:
        """The Claude Agent SDK's name for `events()`: up to and including the `result`."""
        async for event in self.events():
            yield event

    async def receive_messages(self) -> AsyncIterator[Event]:
        """Every event of every prompt, across prompts (MCP servers' changes between them
        too), until the client is closed (`disconnect()`)."""
        while not (self._closed and self._queue.empty()):
            event = await self._queue.get()
            if isinstance(event, _Closed):
                return
            if isinstance(event, ResultEvent):
                self._unread -= 1
            if self.options.include_partial_messages or not _partial(event):
                yield event

    async def interrupt(self) -> None:
        """Stop the running prompt (a pending permission question is denied with it); its
        `result` says "cancelled" (`result.cancelled`) and the session can be continued. A
        no-op when nothing runs."""
        task = self._task
        if task is None or task.done():
            return
        if self._started:
            task.cancel()
        else:  # a cancel now would never let the task begin, and so never give its result
            self._cancel_first = True
        await asyncio.wait({task})

    async def set_mode(self, mode: str) -> None:
        """The permission mode from now on: Peri's names (CONTRACT.md §6) or the Claude
        Agent SDK's (`acceptEdits`, `bypassPermissions`, `dontAsk`); OptionError otherwise."""
        peri = peri_mode(mode, "mode")
        runtime = self._connected()
        runtime.mode = peri
        if runtime.agent is not None:
            runtime.agent.policy.mode = peri
        self._set_asking(mode != NO_QUESTIONS)

    async def set_permission_mode(self, mode: str) -> None:
        """The Claude Agent SDK's name for `set_mode()`."""
        await self.set_mode(mode)

    async def set_model(self, name: str) -> None:
        runtime = self._connected()
        runtime.model = name
        if runtime.agent is not None:
            runtime.agent.model = name

    async def close(self) -> None:
        """Stop what runs and release the session (its file stays, to be resumed); the
        client cannot be used again (`send()` raises PeriError)."""
        if self._closed:
            return
        await self.interrupt()
        self._closed = True
        if self._unwatch is not None:
            self._unwatch()
        if self.runtime is not None:
            self.runtime.close()
        self._queue.put_nowait(CLOSED)

    async def disconnect(self) -> None:
        """The Claude Agent SDK's name for `close()`."""
        await self.close()

    async def get_mcp_status(self) -> dict[str, list[dict[str, object]]]:
        """The MCP servers now, as the Claude Agent SDK's `get_mcp_status()` answers:
        `{"mcpServers": [{"name", "status", "scope", "transport", "tools", "error"?, ...}]}`,
        `status` one of pending, connected, failed, disabled."""
        return {"mcpServers": self._connected().mcp_status_list()}


def _partial(event: Event) -> bool:
    return event.type in PARTIAL_TYPES


async def query(prompt: str, options: PeriOptions | None = None) -> AsyncIterator[Event]:
    """One prompt run to its end: its events, the `result` last. The client is closed before
    the result is yielded, so a program that returns at the result (the usual loop) leaves the
    session free for the next `query(..., PeriOptions(resume=...))` at once."""
    result: Event | None = None
    async with PeriClient(options) as client:
        await client.send(prompt)
        async for event in client.events():
            if isinstance(event, ResultEvent):
                result = event
                break
            yield event
    if result is not None:
        yield result
