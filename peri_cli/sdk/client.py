"""`PeriClient`, a conversation with Peri, and `query`, one prompt run to its end (CONTRACT.md §8).

Each client has its own runtime: its workspace, environment and PERI_HOME come from its options,
never from the process's current directory or `os.environ` as changed by another client, so
several clients in one event loop do not interfere."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import TracebackType

from peri_cli.agent.host import StartupError
from peri_cli.base.events import Notice
from peri_cli.base.modes import MODES
from peri_cli.base.settings import SettingsLayer
from peri_cli.base.tool import EditorKind, ToolTraits
from peri_cli.context.plan_mode import approved_plan
from peri_cli.extensions.commands import COMMANDS, parse_command
from peri_cli.extensions.skills.catalog import SkillError
from peri_cli.extensions.skills.invocation import invoke_user_skill
from peri_cli.sdk.asking import Asker
from peri_cli.sdk.composed import Runtime
from peri_cli.sdk.events import PARTIAL_TYPES, Event, ResultEvent
from peri_cli.sdk.history import replay
from peri_cli.sdk.hookmatchers import program_hooks
from peri_cli.sdk.netasking import network_ask
from peri_cli.sdk.options import PeriOptions
from peri_cli.sdk.runtime import RunSpec, build_from_spec, mcp_layers
from peri_cli.sdk.turn import PromptRun, watch_mcp


class PeriError(Exception):
    """A run that cannot start: one line for the user; `exit_code` as `peri -p` would exit
    (2: bad usage, e.g. an unknown session id; 1: anything else)."""

    def __init__(self, message: str, exit_code: int = 1, session_id: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.session_id = session_id


def spec_from_options(options: PeriOptions) -> RunSpec:
    """A program's options as the run they describe."""
    env = {**os.environ, **options.env}
    if options.peri_home is not None:
        env["PERI_HOME"] = str(options.peri_home)
    workspace = Path(options.cwd if options.cwd is not None else os.getcwd())
    sources = tuple(options.setting_sources or ())
    layers = mcp_layers(options.mcp_servers)
    if options.sandbox is not None:  # counted as the user's own settings, like its servers
        layers.append(
            SettingsLayer("user", Path("<PeriOptions.sandbox>"), {"sandbox": dict(options.sandbox)})
        )
    return RunSpec(
        workspace=workspace.expanduser().resolve(),
        env=env,
        provider=options.provider,
        model=options.model,
        permission_mode=options.permission_mode,
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
        append_system=options.append_system_prompt,
        files=options.files,
        hooks=program_hooks(options.hooks),
    )


class PeriClient:
    """A conversation: `async with PeriClient(options) as client`, then `await client.send(p)`
    and `async for event in client.events()` (until that prompt's `result`), per prompt."""

    def __init__(self, options: PeriOptions | None = None, *, spec: RunSpec | None = None) -> None:
        """`spec` (for Peri's own faces): the run as the command line describes it, instead of
        the one the options describe; the options then give only the callback and partials."""
        self.options = options or PeriOptions()
        self._spec = spec
        self.runtime: Runtime | None = None
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._asker: Asker | None = None
        self._prompts = 0
        self._unwatch: Callable[[], None] | None = None

    async def __aenter__(self) -> PeriClient:
        await self.connect()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        """Build the run: settings, session (new, resumed or forked), agent, MCP servers."""
        if self.runtime is not None:
            return
        try:
            spec = self._spec or spec_from_options(self.options)
            self.runtime = build_from_spec(spec)
        except StartupError as e:
            raise PeriError(str(e), e.exit_code) from e
        agent = self.runtime.agent
        assert agent is not None
        self._asker = Asker(self.options.can_use_tool, agent.policy, self.session_id)
        # a sandboxed command's new domain: can_use_tool("Network", {"domain": ...}) or denied
        self.runtime.network_asker = network_ask(self.options.can_use_tool, self.session_id)
        self.runtime.sandbox_sources = spec.setting_sources  # the files it reads again on change

    @property
    def session_id(self) -> str:
        assert self.runtime is not None and self.runtime.session is not None, "not connected"
        return self.runtime.session.id

    @property
    def warnings(self) -> list[str]:
        """What the user should know about this run's settings, trust and session."""
        return list(self.runtime.warnings) if self.runtime is not None else []

    async def send(self, prompt: str, *, images: Sequence[tuple[str, str]] = ()) -> None:
        """Start running `prompt` (blank: continue an unanswered session); `events()` streams
        it. PeriError when it cannot start (nothing to continue, no provider key, a bad skill).
        `images`: (media type, base64 data) pairs the prompt names as `[image #1]`, ... ."""
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
        self._task = asyncio.create_task(self._run(prompt, tuple(images)))

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

    async def _run(self, prompt: str, images: tuple[tuple[str, str], ...] = ()) -> None:
        runtime = self._connected()
        assert self._asker is not None and runtime.agent is not None
        run = PromptRun(
            runtime,
            self._asker,
            self._queue.put_nowait,
            partial=self.options.include_partial_messages,
        )
        run.init_line()
        first = self._prompts == 0
        self._prompts += 1
        if first:
            self._unwatch = watch_mcp(runtime, self._queue.put_nowait)
        try:
            await run.run(prompt, first=first, images=images)
        finally:
            for notice in self._asker.notices:
                run.core(notice)
            self._asker.notices.clear()
            for line in runtime.take_sandbox_notes():  # (a domain's "always" not saved, ...)
                run.core(Notice(line, "warning"))
            self._queue.put_nowait(run.out.result_event(runtime.agent))

    async def events(self) -> AsyncIterator[Event]:
        """The running prompt's events, up to and including its `result`."""
        if self._task is None:
            return
        while True:
            event = await self._queue.get()
            if self.options.include_partial_messages or not _partial(event):
                yield event
            if isinstance(event, ResultEvent):
                return

    async def receive_response(self) -> list[Event]:
        """The running prompt's events, all at once."""
        return [e async for e in self.events()]

    async def interrupt(self) -> None:
        """Stop the running prompt (a pending permission question is denied with it); its
        `result` says "cancelled" and the session can be continued."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})

    async def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; one of {', '.join(MODES)}")
        runtime = self._connected()
        runtime.mode = mode
        if runtime.agent is not None:
            runtime.agent.policy.mode = mode

    async def set_model(self, name: str) -> None:
        runtime = self._connected()
        runtime.model = name
        if runtime.agent is not None:
            runtime.agent.model = name

    @property
    def model(self) -> str:
        """The model the next request uses."""
        return self._connected().model

    @property
    def mode(self) -> str:
        """The permission mode in force."""
        runtime = self._connected()
        return runtime.agent.policy.mode if runtime.agent is not None else str(runtime.mode)

    @property
    def approved_plan(self) -> str | None:
        """The plan of the session's latest approved `ExitPlanMode` call (None: none yet)."""
        session = self._connected().session
        return None if session is None else approved_plan(session.entries)

    @property
    def credentials_problem(self) -> str | None:
        """Why the provider cannot be reached (naming the variable that holds its key)."""
        return self._connected().credentials_problem

    async def list_models(self) -> list[str]:
        """The models the provider offers (its own list; none: just the current model)."""
        runtime = self._connected()
        lister = getattr(runtime.agent.provider if runtime.agent else None, "list_models", None)
        try:
            found = await lister() if lister is not None else None
        except Exception:  # a provider without a list, or unreachable: the current model only
            found = None
        names = list(found or [])
        return names if runtime.model in names else [runtime.model, *names]

    def commands(self) -> list[tuple[str, str, str]]:
        """What a prompt may start with: (name, description, argument hint) for the slash
        commands that run outside the TUI, the skills a person may invoke and the custom
        commands (each by the name that reaches it)."""
        runtime = self._connected()
        out = [(c.name, c.description, c.usage) for c in COMMANDS.values() if c.headless]
        out += [(s.name, s.description, s.argument_hint) for s in runtime.skills.for_user()]
        out += [
            (r.call, f"{r.command.description} ({r.command.where})", r.command.argument_hint)
            for r in runtime.custom_commands.rows()
        ]
        return out

    def tool_traits(self, name: str) -> ToolTraits:
        """What the session's tool of that name says of itself (its capability, card argument,
        editor kind, read-only, deferred); plain traits for a name it does not have."""
        return self._connected().tool_traits(name)

    def editor_kind(self, name: str) -> EditorKind:
        """How an editor shows a call of that tool (ACP's tool kind)."""
        return self.tool_traits(name).editor_kind

    def history(self) -> list[Event]:
        """The session's conversation so far as events (`UserEvent` for the person's prompts),
        in the order written: what an editor replays when it loads the session."""
        runtime = self._connected()
        assert runtime.session is not None
        return replay(runtime.session.entries, runtime.session.id)

    async def close(self) -> None:
        """Stop what runs and release the session (its file stays, to be resumed)."""
        await self.interrupt()
        if self._unwatch is not None:
            self._unwatch()
        if self.runtime is not None:
            self.runtime.close()

    def denial_summary(self) -> str | None:
        """One line for a person: how many calls were denied and the flag that allows them."""
        runtime = self._connected()
        agent = runtime.agent
        if agent is None or not agent.denials:
            return None
        from peri_cli.sdk.summary import denial_summary

        return denial_summary(agent)

    def _connected(self) -> Runtime:
        if self.runtime is None:
            raise PeriError("the client is not connected: use `async with PeriClient(...)`")
        return self.runtime

    async def get_mcp_status(self) -> dict[str, list[dict[str, object]]]:
        """The MCP servers now, as the Claude Agent SDK's `get_mcp_status()` answers:
        `{"mcpServers": [{"name", "status", "scope", "transport", "tools", "error"?, ...}]}`,
        `status` one of pending, connected, failed, disabled."""
        return {"mcpServers": self._connected().mcp_status_list()}


def _partial(event: Event) -> bool:
    return event.type in PARTIAL_TYPES


async def query(prompt: str, options: PeriOptions | None = None) -> AsyncIterator[Event]:
    """One prompt run to its end: its events, the `result` last."""
    async with PeriClient(options) as client:
        await client.send(prompt)
        async for event in client.events():
            yield event
