"""Everything the runtime needs to bring up MCP in one call: read the configs, decide what may
start (project servers only in a trusted workspace), start the manager, and say what was skipped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.core.textsafe import visible
from peri_cli.mcp.config import load_server_configs
from peri_cli.mcp.manager import McpManager
from peri_cli.mcp.plan import plan_servers
from peri_cli.mcp.status import timeouts_from_env


@dataclass
class Boot:
    manager: McpManager | None  # None when no server may start
    warnings: list[str] = field(default_factory=list)  # one line each, safe to show


def start_servers(
    workspace: Path,
    peri_home: Path,
    env: Mapping[str, str],
    *,
    trusted: bool,
    log_dir: Path | None = None,
) -> Boot:
    """Read, plan and start (in the background; returns at once)."""
    configs = load_server_configs(workspace, peri_home, env)
    plan = plan_servers(configs, trusted=trusted)
    warnings = [visible(f"MCP config skipped: {p}") for p in configs.problems]
    warnings += [
        visible(f"MCP server {s.config.name!r} from {s.config.source} not started: {s.reason}")
        for s in plan.skipped
        if not s.shadowed
    ]
    if not plan.start and not plan.skipped:
        return Boot(None, warnings)
    manager = McpManager(
        plan.start,
        skipped=plan.skipped,
        timeouts=timeouts_from_env(env),
        env=env,
        log_dir=log_dir,
    )
    manager.start()
    return Boot(manager, warnings)
