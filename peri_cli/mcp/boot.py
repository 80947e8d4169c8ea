"""What the runtime calls to bring up MCP: gather the entries, decide what may start (project
servers only in a trusted workspace), start the manager, and say what was skipped; again when the
workspace becomes trusted mid-run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.childenv import child_env
from peri_cli.base.settings import McpServerSetting
from peri_cli.base.textsafe import visible
from peri_cli.mcp.config import ServerConfig, gather_configs
from peri_cli.mcp.manager import McpManager
from peri_cli.mcp.plan import NOT_APPROVED, UNTRUSTED, StartPlan, plan_servers
from peri_cli.mcp.status import timeouts_from_env

Approve = Callable[[ServerConfig], bool]


@dataclass
class Boot:
    manager: McpManager | None  # None when nothing is configured
    warnings: list[str] = field(default_factory=list)  # one line each, safe to show
    # Project servers of a trusted workspace that `approve` did not let start (added since the
    # workspace was trusted): the caller asks about them, or says why they did not start.
    unapproved: tuple[ServerConfig, ...] = ()


def plan_run(
    workspace: Path,
    env: Mapping[str, str],
    settings_servers: Iterable[McpServerSetting],
    *,
    trusted: bool,
    approve: Approve | None = None,
) -> tuple[StartPlan, list[str]]:
    """The plan, and one warning line per broken entry and per project server left out for a
    reason other than trust or approval (core's trust warning already names what an untrusted
    workspace's files asked for, `.mcp.json` servers included; the caller words the rest)."""
    configs = gather_configs(workspace, env, settings_servers)
    plan = plan_servers(configs, trusted=trusted, approve=approve)
    warnings = [visible(f"MCP config skipped: {p}") for p in configs.problems]
    warnings += [
        visible(f"MCP server {s.config.name!r} from {s.config.source} not started: {s.reason}")
        for s in plan.skipped
        if not s.shadowed and s.reason not in (UNTRUSTED, NOT_APPROVED)
    ]
    # A project server that named Peri's credentials: said for those that start or are asked
    # about (an untrusted workspace's servers do not run, so their entries change nothing).
    runs = [*plan.start, *(s.config for s in plan.skipped if s.reason == NOT_APPROVED)]
    warnings += [
        visible(
            f"MCP server {c.name!r} from {c.source}: "
            + ", ".join(f"${{{name}}}" for name in c.withheld)
            + " left empty (a project's server never gets Peri's credentials)"
        )
        for c in runs
        if c.withheld
    ]
    return plan, warnings


def _unapproved(plan: StartPlan) -> tuple[ServerConfig, ...]:
    return tuple(s.config for s in plan.skipped if s.reason == NOT_APPROVED)


def start_servers(
    workspace: Path,
    env: Mapping[str, str],
    settings_servers: Iterable[McpServerSetting],
    *,
    trusted: bool,
    log_dir: Path | None = None,
    scrub_env: Iterable[str] = (),
    approve: Approve | None = None,
) -> Boot:
    """Plan and start in the background (returns at once). `${VAR}`s expand from all of `env`;
    stdio servers start from `env` without Peri's credentials and the `scrub_env` names.
    `approve` is asked about each project server of a trusted workspace."""
    plan, warnings = plan_run(workspace, env, settings_servers, trusted=trusted, approve=approve)
    if not plan.start and not plan.skipped:
        return Boot(None, warnings)
    manager = McpManager(
        plan.start,
        skipped=plan.skipped,
        timeouts=timeouts_from_env(env),
        env=child_env(env, scrub_env),
        log_dir=log_dir,
    )
    manager.start()
    return Boot(manager, warnings, _unapproved(plan))


def trust_granted(
    boot: Boot,
    workspace: Path,
    env: Mapping[str, str],
    settings_servers: Iterable[McpServerSetting],
    *,
    log_dir: Path | None = None,
    scrub_env: Iterable[str] = (),
) -> Boot:
    """The workspace is trusted now: start its project servers too (those already running
    keep running)."""
    if boot.manager is None:
        return start_servers(
            workspace, env, settings_servers, trusted=True, log_dir=log_dir, scrub_env=scrub_env
        )
    plan, warnings = plan_run(workspace, env, settings_servers, trusted=True)
    boot.manager.add(plan.start)
    return Boot(boot.manager, warnings)
