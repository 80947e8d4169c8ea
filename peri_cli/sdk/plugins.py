"""The installed plugins a run uses, joined to Peri's own parts: their MCP servers as a settings
layer of the user's (installing one was the user's own choice), their skill and agent folders
as roots below the user's and the project's, and their hooks with the plugin's root in each
hook's environment."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from peri_cli.agent.workspace import settle
from peri_cli.base.settings import LoadedSettings, SettingsLayer, peri_home_from_env
from peri_cli.base.textsafe import visible
from peri_cli.extensions.hooks import (
    Hook,
    HookConfig,
    hook_config_from_layers,
    hooks_from_settings,
    plugin_env,
)
from peri_cli.extensions.plugins.active import ActivePlugins, active_plugins
from peri_cli.extensions.plugins.install import (
    Staged,
    add_marketplace,
    marketplace,
    remove_marketplace,
    stage,
    uninstall,
    update_marketplace,
)
from peri_cli.extensions.plugins.manifest import PLUGIN_FILE
from peri_cli.extensions.plugins.parts import describe
from peri_cli.extensions.plugins.registry import (
    PluginError,
    enabled_table,
    installed,
    marketplaces,
    set_enabled,
)
from peri_cli.permissions.rule_syntax import RuleSource

__all__ = [
    "ActivePlugins",
    "PluginError",
    "Staged",
    "active_plugins",
    "add_marketplace",
    "describe",
    "enabled_table",
    "folders",
    "hook_config",
    "installed",
    "marketplace",
    "marketplaces",
    "peri_home_from_env",
    "remove_marketplace",
    "set_enabled",
    "stage",
    "uninstall",
    "update_marketplace",
    "visible",
    "with_plugin_servers",
]


def folders(active: ActivePlugins, kind: str) -> list[tuple[Path, str]]:
    """Each enabled plugin's folders of one kind ("skills", "agents", "commands", ...), with
    the plugin's key as their label."""
    return [(d, p.key) for p in active.plugins for d in p.folders.get(kind, ()) if d.is_dir()]


def with_plugin_servers(
    loaded: LoadedSettings, active: ActivePlugins, env: Mapping[str, str], *, trusted: bool
) -> LoadedSettings:
    """The settings with the plugins' MCP servers below every file (a server the user names
    in their own file wins over a plugin's of the same name)."""
    layers = [
        SettingsLayer("user", p.root / PLUGIN_FILE, {"mcpServers": p.mcp_servers})
        for p in active.plugins
        if p.mcp_servers
    ]
    if not layers:
        return loaded
    return settle(
        dataclasses.replace(loaded, layers=(*layers, *loaded.layers)), env, trusted=trusted
    )


def hook_config(
    loaded: LoadedSettings | None, active: ActivePlugins, program: Sequence[Hook] = ()
) -> HookConfig:
    """Every hook a session runs: the settings files' (in their order), then each enabled
    plugin's, with the plugin's root in its environment (the shell expands
    `${CLAUDE_PLUGIN_ROOT}`; Peri never does, in a hook's command), then the program's own
    Python hooks (`PeriOptions.hooks`)."""
    config = hook_config_from_layers(loaded.layers if loaded is not None else ())
    for p in active.plugins:
        if p.hooks:
            where = str(p.hooks_file or p.root / PLUGIN_FILE)
            found = hooks_from_settings(
                p.hooks, RuleSource("user", where), env=plugin_env(p.root), plugin=p.key
            )
            config.extend(found)
    config.hooks.extend(program)
    return config
