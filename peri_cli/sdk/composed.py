"""The runtime of one run: settings, trust, the session store, the provider, the session's
agent and its SubAgents (`runtime.build_runtime` makes one)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.agent.compaction.compactor import Compactor
from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.factory import AgentConfig, AgentFactory
from peri_cli.agent.host import StartupError
from peri_cli.agent.loop import Agent
from peri_cli.agent.subagents import SubagentManager
from peri_cli.agent.workspace import settle
from peri_cli.base import first_look
from peri_cli.base.childenv import child_env
from peri_cli.base.models import context_window
from peri_cli.base.provider import Provider
from peri_cli.base.settings import LoadedSettings, Settings
from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.base.tool import FilePort
from peri_cli.context.contributions import ContributionChain, default_chain
from peri_cli.context.meta import ALL_ON, MetaState
from peri_cli.context.plan_mode import plan_mode_note
from peri_cli.context.tokens import default_counter
from peri_cli.extensions.agent_types import AgentCatalog, AgentType
from peri_cli.extensions.custom_commands.catalog import CommandCatalog
from peri_cli.extensions.hookpoints import Hooks
from peri_cli.extensions.hooks import Hook, SessionStartSource
from peri_cli.extensions.skills.catalog import SkillCatalog
from peri_cli.permissions.asking import Mode
from peri_cli.permissions.hidden import hidden_paths
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.permissions.rule_sources import RuleSet
from peri_cli.permissions.trust import TrustState
from peri_cli.permissions.truststore import TrustRecord, TrustStore, TrustStoreError
from peri_cli.sdk.mcpside import McpSide
from peri_cli.sdk.plugins import ActivePlugins, hook_config
from peri_cli.sdk.promptside import PromptSide
from peri_cli.sdk.sandboxside import SandboxSide
from peri_cli.sdk.styleside import StyleSide
from peri_cli.sdk.toolside import ToolSide
from peri_cli.session.checkpoints import Checkpointer
from peri_cli.session.store import Session, SessionNotFound, SessionStore
from peri_cli.session.transcript_file import TranscriptError

if TYPE_CHECKING:
    from peri_cli.mcp.boot import Boot
    from peri_cli.mcp.config import ServerConfig
    from peri_cli.mcp.manager import McpManager


def choose_provider(flag: str | None, settings: Settings, env: Mapping[str, str]) -> str:
    return first_look.choose_provider(flag, settings.provider, env)


def credentials_problem(provider: str, env: Mapping[str, str]) -> str | None:
    """Why the provider cannot be reached, in words a user can act on; None when it can."""
    prefix = provider.upper()
    if env.get(f"{prefix}_API_KEY") or env.get(f"{prefix}_BASE_URL"):
        return None
    return (
        f"No {provider} API key. Set {prefix}_API_KEY, or point {prefix}_BASE_URL at a local "
        "server (vLLM, llama.cpp, Ollama)"
        + (", or choose --provider openai." if provider == "anthropic" else ".")
    )


@dataclass
class Runtime(McpSide, SandboxSide, ToolSide, StyleSide, PromptSide):
    workspace: Path
    peri_home: Path
    env: Mapping[str, str]
    settings: Settings
    store: SessionStore
    provider_name: str
    model: str
    mode: Mode
    max_turns: int | None
    warnings: list[str] = field(default_factory=list)
    session: Session | None = None
    agent: Agent | None = None
    subagents: SubagentManager | None = None
    mcp: McpManager | None = None  # the MCP servers, connecting in the background
    _provider: Provider | None = None
    _provider_built: bool = False  # `_provider` came from the environment, not from a test
    _mcp_boot: Boot | None = None
    # Workspace trust (None: built without settings files, e.g. by a test: nothing to unlock).
    trust: TrustState | None = None
    loaded: LoadedSettings | None = None
    mode_from_flag: bool = False
    start_after_trust: bool = False  # a new session waits for the trust question's answer
    # The skills of the attached session: none when its Meta Harness turned `skills` off.
    skills: SkillCatalog = field(default_factory=SkillCatalog)
    plugins: ActivePlugins = field(default_factory=ActivePlugins)  # the enabled, installed ones
    loaded_skills: SkillCatalog | None = None  # every skill found (None: as `skills` at start)
    custom_commands: CommandCatalog = field(default_factory=CommandCatalog)  # .claude/commands
    meta: MetaState = ALL_ON  # the attached session's frozen Meta Harness state
    rules: RuleSet = field(default_factory=RuleSet)  # settings files and the command line
    session_source: SessionStartSource = "startup"  # how the attached session began
    interactive: bool = False  # the TUI: it can ask about project servers added since trust
    _unapproved: list[ServerConfig] = field(default_factory=list)  # waiting for the user's word
    append_system: str | None = None  # a program's text after a new session's system prompt
    files: FilePort | None = None  # Read, Edit and Write through a program instead of the disk
    # The agent types the new snapshot read, taken by that session's agent (read once a start).
    _types_read: tuple[bool, AgentCatalog] | None = None
    # Only these built-in tools (None: all of them); MCP servers' tools are not affected.
    builtin_names: frozenset[str] | None = None
    program_hooks: tuple[Hook, ...] = ()  # a program's Python hooks (`PeriOptions.hooks`)
    system_prompt: str | None = None  # a program's own text instead of Peri's (new sessions)
    program_agents: tuple[AgentType, ...] = ()  # `PeriOptions.agents`: they win over files

    @property
    def trusted(self) -> bool:
        return self.trust is not None and self.trust.trusted

    @property
    def trust_pending(self) -> bool:
        """The TUI must ask whether to trust the workspace before the session is attached."""
        return self.trust is not None and self.trust.ask

    def answer_trust(self, answer: bool | None) -> None:
        """The user's answer (None: no answer, ask again next time): apply it to the settings,
        record it, then start the session that waited for it."""
        assert self.trust is not None
        state = self.trust
        state.ask = False
        if answer is not None:
            declined = frozenset(item.identity for item in state.loosenings)
            # the dialog listed the project's MCP servers: trusting it approves those
            servers = frozenset(c.fingerprint() for c in self._project_servers())
            record = TrustRecord(True, servers=servers) if answer else TrustRecord(False, declined)
            state.record = record
            try:
                TrustStore(self.peri_home).record(self.workspace, record)
            except TrustStoreError as e:
                self.warnings.append(f"{e}; the answer holds for this run only")
        if answer:
            state.trusted, state.why = True, "recorded"
            assert self.loaded is not None
            self._apply_settings(settle(self.loaded, self.env, trusted=True))
            if self.agent is not None:  # the workspace's allow rules and hooks apply now
                self.agent.policy.trusted = True
                if self.agent.hooks is not None:
                    self.agent.hooks.trusted = True
            self._mcp_trusted()
        else:
            state.why = "declined" if answer is False else state.why
            if warning := state.warning():
                self.warnings.append(warning)
        if self.start_after_trust:
            self.start_after_trust = False
            self.start_new()

    def _apply_settings(self, loaded: LoadedSettings) -> None:
        self.loaded, self.settings = loaded, loaded.settings
        self.check_sandbox()  # trusted now: the workspace's files may widen it
        if not self.mode_from_flag:
            self.mode = loaded.settings.permission_mode
            if self.agent is not None:
                self.agent.policy.mode = self.mode

    @property
    def context_window(self) -> int:
        return context_window(self.model, self.settings.context_window)

    @property
    def credentials_problem(self) -> str | None:
        """Why no model can be reached; None for a provider given from outside (a test's).
        One built here from the environment does not vouch for a key (listing models builds
        it, keyless or not)."""
        if self._provider is not None and not self._provider_built:
            return None
        return credentials_problem(self.provider_name, self.env)

    def provider(self) -> Provider:
        if self._provider is None:
            from peri_cli.providers.procstream import stream_provider

            prefix = self.provider_name.upper()
            # The TUI's streams are parsed in a worker process and arrive batched per frame;
            # `-p`, ACP and the SDK get every delta as the server sent it.
            self._provider = stream_provider(
                self.provider_name,
                api_key=self.env.get(f"{prefix}_API_KEY") or None,
                base_url=self.env.get(f"{prefix}_BASE_URL") or None,
                interactive=self.interactive,
            )
            self._provider_built = True
        return self._provider

    def start_new(self) -> Session:
        snapshot = self.new_snapshot()
        try:
            session = self.store.create(snapshot)
        except OSError as e:
            raise StartupError(self._home_problem(e)) from e
        self.session_source = "startup"
        return self._attach(session)

    def _home_problem(self, e: OSError) -> str:
        where = e.filename or self.store.root
        return (
            f"cannot write sessions under PERI_HOME ({self.peri_home}): {where}: "
            f"{e.strerror or e}. Point PERI_HOME at a writable folder."
        )

    def start_existing(self, id_or_prefix: str, *, fork: bool) -> Session:
        try:
            session_id = self.store.resolve(id_or_prefix)
        except SessionNotFound as e:
            raise StartupError(str(e), exit_code=2) from e
        try:
            session = self.store.fork(session_id) if fork else self.store.open(session_id)
        except TranscriptError as e:  # locked by another process, or unreadable
            raise StartupError(str(e)) from e
        except OSError as e:
            raise StartupError(self._home_problem(e)) from e
        self.warnings.extend(session.warnings)
        self.session_source = "resume"
        return self._attach(session)

    def _attach(self, session: Session) -> Session:
        if self.session is not None:
            self.session.close()
        self.session = session
        # The session's frozen Meta Harness state decides what its agents get, whatever the
        # settings say now (a session from before the Meta Harness has none: all on).
        self.meta = MetaState.from_header(session.snapshot.meta_harness)
        all_skills = self._all_skills()
        self.skills = all_skills if self.meta.enabled("skills") else SkillCatalog()
        self.agent = self.make_agent(session)
        return session

    def make_agent(self, session: Session) -> Agent:
        """The session's main agent, built by the core's factory, with its SubAgent manager."""
        from peri_cli.tools.agent import AgentTool

        home = Path(self.env.get("HOME", str(Path.home())))
        catalog = self._agent_types(home, self.meta.builtin_subagents)
        agent_tool = AgentTool(catalog)
        factory = AgentFactory(
            provider=_LazyProvider(self),
            workspace=self.workspace,
            make_tools=self.tool_maker(agent_tool),
            make_compactor=self.make_compactor,
            make_chain=self._make_chain,
            env=child_env(self.env, self.settings.scrub_env),
            retry_max_wait=self.settings.retry_max_wait_seconds,
            hooks=self._hooks_for(session),
            checkpoints=Checkpointer(session),
            files=self.files,
            sandbox=self.command_sandbox(home),
        )
        policy = PermissionPolicy(
            mode=self.mode,
            workspace=self.workspace,
            rules=self.rules,
            trusted=self.trusted,
            home=home,
            sandbox=self.sandbox_gate(),
            hidden=hidden_paths(
                self._sandbox or SandboxSettings(), home=home, workspace=self.workspace
            ),
        )
        agent = factory.build(
            session, AgentConfig(model=self.model, policy=policy, max_turns=self.max_turns)
        )
        self.subagents = agent_tool.runner = SubagentManager(agent, factory, catalog)
        self.warnings.extend(catalog.problems)
        return agent

    def _hooks_for(self, session: Session) -> Hooks | None:
        """The session's command hooks (None when none are configured)."""
        config = hook_config(self.loaded, self.plugins, self.program_hooks)
        if not config.hooks:
            return None
        return Hooks(
            config=config,
            trusted=self.trusted,
            cwd=self.workspace,
            env=child_env(self.env, self.settings.scrub_env),
            session_id=session.id,
            transcript_path=session.path,
            mode=lambda: self.mode,
        )

    def _make_chain(self) -> ContributionChain:
        chain = default_chain()
        chain.add("plan", plan_mode_note(self.mode_now))  # says what plan mode means, in it
        if self.mcp is not None:
            chain.add("mcp", self.mcp.contribution)  # adds no text; applies late MCP tools
        for name, _ in list(chain.contributors):
            if not self.meta.keeps_contribution(name):
                chain.remove(name)
        return chain

    def make_compactor(self) -> Compactor:
        """Micro and Full compaction as the settings say; `/compact` works even when disabled."""
        return Compactor(CompactConfig.from_settings(self.settings), counter=default_counter())

    def close(self) -> None:
        """End the run: stop background commands, SubAgents and MCP servers, release the
        session."""
        if self.subagents is not None:
            for child in self.subagents.children.values():
                if child.task is not None and not child.task.done():
                    child.task.cancel()  # the caller's event loop is ending: mark them stopped
        if self.agent is not None:
            for tool in self.agent.tools.direct.values():
                stop = getattr(tool, "terminate_background", None)
                if stop is not None:
                    stop()
        if self.mcp is not None:
            self.mcp.close()
        self.close_sandbox()
        if self._provider_built and (stop := getattr(self._provider, "close", None)) is not None:
            stop()  # the TUI's stream worker
        if self.session is not None:
            self.session.close()


class _LazyProvider:
    """Builds the SDK client on the first request, keeping SDK imports off the start path."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.name = runtime.provider_name
        if runtime.interactive and not runtime.credentials_problem:  # the TUI's stream worker
            getattr(runtime.provider(), "warm", lambda: None)()  # loads its SDK meanwhile

    def stream(self, request):  # type: ignore[no-untyped-def]
        return self._runtime.provider().stream(request)

    async def list_models(self) -> list[str] | None:
        """The provider's model list (None: it has none); the SDK is imported on first ask."""
        if self._runtime.credentials_problem:  # no key: no list to ask for
            return None
        lister = getattr(self._runtime.provider(), "list_models", None)  # test doubles may lack it
        return None if lister is None else await lister()
