"""Composition: settings, the session store, the provider and the agent for one run. The command
line's flags (`build_runtime`) and a program's `PeriOptions` (`sdk.client`) both become a
`RunSpec`; nothing here reads the process's directory or environment but through it."""

from __future__ import annotations

import argparse
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peri_cli.agent.host import StartupError
from peri_cli.agent.workspace import load_workspace
from peri_cli.base.claude_settings import model_for
from peri_cli.base.first_look import PreRead
from peri_cli.base.heldenv import held_env
from peri_cli.base.models import default_model
from peri_cli.base.settings import LoadedSettings, Scope, SettingsLayer, peri_home_from_env
from peri_cli.base.settings_check import SettingsError
from peri_cli.base.tool import FilePort
from peri_cli.extensions.agent_types import AgentType
from peri_cli.extensions.commands import COMMANDS
from peri_cli.extensions.custom_commands.catalog import CommandCatalog, CommandSource
from peri_cli.extensions.custom_commands.discovery import load_commands
from peri_cli.extensions.hooks import Hook
from peri_cli.extensions.skills.catalog import SkillCatalog
from peri_cli.extensions.skills.discovery import load_skills
from peri_cli.permissions.rule_sources import RuleSet, rules_from_cli, ruleset_from_layers
from peri_cli.permissions.trust import Loosening, TrustState
from peri_cli.sdk.composed import Runtime, choose_provider, credentials_problem
from peri_cli.sdk.mcpside import GIVEN_SOURCE
from peri_cli.sdk.plugins import (
    ActivePlugins,
    active_plugins,
    folders,
    hook_config,
    with_plugin_servers,
)
from peri_cli.session.store import SessionInfo, SessionStore

__all__ = [
    "RunSpec",
    "Runtime",
    "StartupError",
    "build_from_spec",
    "build_runtime",
    "choose_provider",
    "credentials_problem",
    "mcp_layers",
    "spec_from_args",
]


@dataclass
class RunSpec:
    """Everything one run is built from, whoever asked for it."""

    workspace: Path
    env: Mapping[str, str]
    provider: str | None = None
    model: str | None = None
    permission_mode: Any = None
    max_turns: int | None = None
    trust_workspace: bool = False
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    cont: bool = False
    resume: str | None = None  # "" (the TUI's picker) leaves the session unset
    fork_session: bool = False
    interactive: bool = False
    setting_sources: Collection[Scope] | None = None  # None: every settings file
    extra_layers: Sequence[SettingsLayer] = ()  # a program's own settings (its MCP servers)
    append_system: str | None = None
    files: FilePort | None = None
    pre_read: PreRead | None = None  # the settings files as the TUI's first frame read them
    hooks: Sequence[Hook] = ()  # a program's Python hooks (`PeriOptions.hooks`)
    system_prompt: str | None = None  # a program's text instead of Peri's (`promptchoice`)
    agents: Sequence[AgentType] = ()  # a program's SubAgent types (`PeriOptions.agents`)
    builtin_names: frozenset[str] | None = None  # only these built-in tools (None: all)


def mcp_layers(servers: Mapping[str, Any] | None) -> list[SettingsLayer]:
    """MCP servers a program or an editor names (the `.mcp.json` shape), as a settings layer
    of the user's own: no trust question, beside the servers the settings files name."""
    if not servers:
        return []
    servers = servers.get("mcpServers", servers)
    return [SettingsLayer("user", Path(GIVEN_SOURCE), {"mcpServers": servers})]


def spec_from_args(
    args: argparse.Namespace, env: Mapping[str, str], *, interactive: bool = False
) -> RunSpec:
    """The command line's run: this directory, this environment, the flags."""
    return RunSpec(
        workspace=Path.cwd().resolve(),
        env=env,
        provider=args.provider,
        model=args.model,
        permission_mode=args.permission_mode,
        max_turns=args.max_turns,
        trust_workspace=getattr(args, "trust_workspace", False),
        allowed_tools=getattr(args, "allowed_tools", []),
        disallowed_tools=getattr(args, "disallowed_tools", []),
        cont=args.cont,
        resume=args.resume,
        fork_session=args.fork_session,
        interactive=interactive,
    )


def build_runtime(
    args: argparse.Namespace,
    env: Mapping[str, str] | None = None,
    *,
    interactive: bool = False,
    pre_read: PreRead | None = None,
) -> Runtime:
    """The runtime for this run. `interactive` (the TUI) may leave the trust question open
    (`trust_pending`): a new session then starts once `answer_trust` is called."""
    spec = spec_from_args(args, os.environ if env is None else env, interactive=interactive)
    spec.pre_read = pre_read
    return build_from_spec(spec)


def _rules(spec: RunSpec, rules: RuleSet) -> None:
    for flag, values, behavior in (
        ("--allowedTools", spec.allowed_tools, "allow"),
        ("--disallowedTools", spec.disallowed_tools, "deny"),
    ):
        found, problems = rules_from_cli(list(values), behavior, flag)  # type: ignore[arg-type]
        if problems:
            raise StartupError(problems[0], exit_code=2)
        rules.extend((found, []))


def _with_plugin_skills(
    skills: SkillCatalog, plugins: ActivePlugins, home: Path, peri_home: Path, workspace: Path
) -> SkillCatalog:
    """The skills read again with the enabled plugins' folders among the roots."""
    if not (found := folders(plugins, "skills")):
        return skills
    return load_skills(home=home, peri_home=peri_home, workspace=workspace, plugins=found)


def _commands(
    home: Path, workspace: Path, skills: SkillCatalog, plugins: ActivePlugins | None = None
) -> CommandCatalog:
    """The custom commands: the project's, the user's, then each enabled plugin's `commands/`
    (`/name` and `/<plugin>:name`, `${CLAUDE_PLUGIN_ROOT}` filled in); a skill's or a built-in
    command's name is theirs."""
    extra = [
        CommandSource(d, "plugin", f"plugin {p.key}", p.name, variables=p.env)
        for p in (plugins.plugins if plugins else ())
        for d in p.folders.get("commands", ())
        if d.is_dir()
    ]
    names = [s.name for s in skills.for_user()]
    return load_commands(
        home=home, workspace=workspace, builtins=COMMANDS, skills=names, extra=extra
    )


def _load_workspace(
    spec: RunSpec,
    env: Mapping[str, str],
    peri_home: Path,
    home: Path,
    grants: Sequence[Loosening],
) -> tuple[LoadedSettings, TrustState]:
    try:
        return load_workspace(
            spec.workspace,
            peri_home,
            env,
            home=home,
            mode_flag=spec.permission_mode,
            trust_flag=spec.trust_workspace,
            interactive=spec.interactive,
            extra=grants,
            sources=spec.setting_sources,
            extra_layers=spec.extra_layers,
            pre_read=spec.pre_read,
        )
    except SettingsError as e:
        raise StartupError(str(e), exit_code=2) from e


def build_from_spec(spec: RunSpec) -> Runtime:
    """The runtime of `spec`, its MCP servers started and its session open."""
    # the provider variables Peri moved off its environment block at start (none in an SDK host)
    workspace, env = spec.workspace, {**held_env(), **spec.env}
    peri_home = peri_home_from_env(env)
    home = Path(env.get("HOME", str(Path.home())))
    skills = load_skills(home=home, peri_home=peri_home, workspace=workspace)
    commands = _commands(home, workspace, skills)
    grants = [Loosening("skill_tools", what, src) for what, src in skills.untrusted_grants()]
    grants += [Loosening("command_tools", w, src) for w, src in commands.untrusted_grants()]
    loaded, trust = _load_workspace(spec, env, peri_home, home, grants)
    plugins = active_plugins(peri_home, loaded.layers, trusted=trust.trusted)
    if plugins.plugins:
        loaded = with_plugin_servers(loaded, plugins, env, trusted=trust.trusted)
        skills = _with_plugin_skills(skills, plugins, home, peri_home, workspace)
        commands = _commands(home, workspace, skills, plugins)
    settings, rules = loaded.settings, ruleset_from_layers(loaded.layers)
    _rules(spec, rules)
    warnings = [*loaded.warnings, *trust.warnings, *skills.warnings(), *commands.warnings()]
    warnings += [*rules.problems, *plugins.warnings()]
    warnings += hook_config(loaded, plugins).problems
    if not trust.ask and (line := trust.warning()):
        warnings.append(line)
    provider_name = choose_provider(spec.provider, settings, env)
    runtime = Runtime(
        workspace=workspace,
        peri_home=peri_home,
        env=env,
        settings=settings,
        store=SessionStore(peri_home, workspace),
        provider_name=provider_name,
        model=spec.model or model_for(loaded, provider_name) or default_model(provider_name),
        mode=spec.permission_mode or settings.permission_mode,
        max_turns=spec.max_turns,
        warnings=warnings,
        trust=trust,
        loaded=loaded,
        mode_from_flag=spec.permission_mode is not None,
        skills=skills,
        custom_commands=commands,
        plugins=plugins,
        rules=rules,
        interactive=spec.interactive,
        append_system=spec.append_system,
        files=spec.files,
        program_hooks=tuple(spec.hooks),
        system_prompt=spec.system_prompt,
        program_agents=tuple(spec.agents),
        builtin_names=spec.builtin_names,
    )
    runtime.check_sandbox()  # before anything starts: it may refuse the run
    try:
        if settings.meta_harness.get("mcp") is not False:  # turned off: no server starts
            runtime.start_mcp()
        _open_session(runtime, spec, trust)
    except BaseException:
        runtime.close()  # the MCP servers have started
        raise
    return runtime


def _nothing_to_continue(sessions: list[SessionInfo]) -> str:
    """Why `-c` found nothing; sessions that never got an answer are passed over, not gone."""
    if not sessions:
        return "no session to continue in this workspace"
    n = len(sessions)
    some = "1 session" if n == 1 else f"{n} sessions"
    return (
        f"no session to continue in this workspace: {some} never got an answer "
        f"(pick {'it' if n == 1 else 'one'} with peri -r)"
    )


def _open_session(runtime: Runtime, spec: RunSpec, trust: TrustState) -> None:
    if spec.cont:
        latest = runtime.store.latest()
        if latest is None:
            raise StartupError(_nothing_to_continue(runtime.store.list()), exit_code=2)
        runtime.start_existing(latest, fork=spec.fork_session)
    elif spec.resume:
        runtime.start_existing(spec.resume, fork=spec.fork_session)
    elif spec.resume is None and trust.ask:
        runtime.start_after_trust = True  # the frozen prompt depends on the answer
    elif spec.resume is None:
        runtime.start_new()
    # `-r` without an id leaves the session unset: the TUI opens the picker.
