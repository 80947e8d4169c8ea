"""Which configured servers start: project servers only in a trusted workspace, one per name.

On a name defined at several places the later file wins (project over user, as in Claude Code),
unless it may not start here: then the next one down is used and the skipped one is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from peri_cli.mcp.config import ServerConfig, ServerConfigs


@dataclass(frozen=True)
class Skipped:
    config: ServerConfig
    reason: str
    shadowed: bool = False  # another entry of the same name starts instead


@dataclass(frozen=True)
class StartPlan:
    start: tuple[ServerConfig, ...]
    skipped: tuple[Skipped, ...]


UNTRUSTED = "project server in a workspace that is not trusted; trust the workspace to start it"
NOT_APPROVED = "project server not approved yet"


def plan_servers(
    configs: ServerConfigs,
    *,
    trusted: bool,
    approve: Callable[[ServerConfig], bool] | None = None,
) -> StartPlan:
    """What to start and what was skipped (with why). `approve`, when given, is asked about each
    project server of a trusted workspace (a server added after the workspace was trusted)."""
    by_name: dict[str, list[ServerConfig]] = {}
    for config in configs.servers:
        by_name.setdefault(config.name, []).append(config)
    start: list[ServerConfig] = []
    skipped: list[Skipped] = []
    for candidates in by_name.values():
        chosen: ServerConfig | None = None
        for config in reversed(candidates):  # highest precedence first
            if chosen is not None:
                why = f"shadowed by the entry in {chosen.source}"
                skipped.append(Skipped(config, why, shadowed=True))
                continue
            reason = _refusal(config, trusted, approve)
            if reason is None:
                chosen = config
            else:
                skipped.append(Skipped(config, reason))
        if chosen is not None:
            start.append(chosen)
    return StartPlan(tuple(start), tuple(skipped))


def _refusal(
    config: ServerConfig, trusted: bool, approve: Callable[[ServerConfig], bool] | None
) -> str | None:
    if config.scope == "user":
        return None
    if not trusted:
        return UNTRUSTED
    if approve is not None and not approve(config):
        return NOT_APPROVED
    return None
