"""What a workspace's own files would loosen, one detector per feature: a looser permission mode,
MCP servers (settings or `.mcp.json`), a Meta Harness capability turned back on, plugins a project
enables, a status line command, and guide files or imports leading out of the workspace. Allow
rules and hooks have theirs in their own modules.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from peri_cli.base.mcp_entry import describe_line
from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.base.settings import SettingsLayer
from peri_cli.context.guide_imports import OutsidePath
from peri_cli.context.meta import CAPABILITY_NAMES
from peri_cli.permissions.trust import Detector, Loosening, WorkspaceFiles

# Least to most permissive: a workspace file may move the mode left, never right.
MODE_RANK: dict[str, int] = {"plan": 0, "default": 1, "accept-edits": 2, "bypass": 3}


def permission_mode_loosening(files: WorkspaceFiles) -> list[Loosening]:
    """A workspace `permission_mode` more permissive than the user's own (or `default`)."""
    if files.mode_flag is not None:
        return []
    base: str = "default"
    for layer in files.layers:
        if not layer.from_workspace and "permission_mode" in layer.data:
            base = layer.data["permission_mode"]
    looser = [
        layer
        for layer in files.layers
        if layer.from_workspace
        and MODE_RANK.get(layer.data.get("permission_mode", base), 0) > MODE_RANK[base]
    ]
    # What trust would change: the mode with every workspace value applied vs without the looser.
    trusted = _mode_after(files.layers, base, withheld=())
    untrusted = _mode_after(files.layers, base, withheld=looser)
    if trusted == untrusted:
        return []
    source = next(layer for layer in reversed(files.layers) if "permission_mode" in layer.data)
    return [
        Loosening(
            "permission_mode",
            f'permission_mode "{trusted}"',
            files.label(source.path),
            tuple((layer.path, "permission_mode") for layer in looser),
        )
    ]


def _mode_after(
    layers: Sequence[SettingsLayer], base: str, withheld: Sequence[SettingsLayer]
) -> str:
    mode = base
    for layer in layers:
        if layer.from_workspace and layer not in withheld and "permission_mode" in layer.data:
            mode = layer.data["permission_mode"]
    return mode


def settings_mcp_servers(files: WorkspaceFiles) -> list[Loosening]:
    """`mcpServers` in a project settings file: commands a repository would run."""
    out: list[Loosening] = []
    for layer in files.layers:
        if not layer.from_workspace:
            continue
        for name, config in (layer.data.get("mcpServers") or {}).items():
            out.append(
                Loosening(
                    "mcp_server",
                    _server_shown(name, config),
                    files.label(layer.path),
                    ((layer.path, f"mcpServers.{name}"),),
                )
            )
    return out


def mcp_json_servers(files: WorkspaceFiles) -> list[Loosening]:
    """`mcpServers` in the workspace's `.mcp.json` (Claude Code's file): commands it would run.
    A file that cannot be read loosens nothing (peri_cli/mcp reports it)."""
    if not files.workspace.is_absolute():
        return []  # judging which settings to withhold: no file of this kind is involved
    path = files.workspace / ".mcp.json"
    try:
        data = json.loads(read_text(path, inside=files.workspace))
    except (SafeReadError, ValueError):
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    out: list[Loosening] = []
    for name, config in (servers if isinstance(servers, dict) else {}).items():
        out.append(Loosening("mcp_server", _server_shown(name, config), files.label(path)))
    return out


def _server_shown(name: str, config: Any) -> str:
    """The whole entry as written (command, args, cwd, env, url, headers), not just its command:
    an `env` or a header decides what runs and where data goes as much as the command does."""
    runs = describe_line(config)
    return f"MCP server {name!r}" + (f" ({runs})" if runs else "")


def meta_harness_loosening(files: WorkspaceFiles) -> list[Loosening]:
    """A project's `meta_harness` turning back on a capability the user's settings turn off."""
    user_off: set[str] = set()
    for layer in files.layers:
        if not layer.from_workspace:
            values = layer.data.get("meta_harness") or {}
            user_off |= {c for c in CAPABILITY_NAMES if values.get(c) is False}
    out: list[Loosening] = []
    for layer in files.layers:
        values = (layer.data.get("meta_harness") or {}) if layer.from_workspace else {}
        for name in sorted(user_off):
            if values.get(name) is True:
                out.append(
                    Loosening(
                        "meta_harness",
                        f"meta_harness {name!r} back on (your settings turn it off)",
                        files.label(layer.path),
                        ((layer.path, f"meta_harness.{name}"),),
                    )
                )
    return out


def enabled_plugins(files: WorkspaceFiles) -> list[Loosening]:
    """`enabledPlugins` in the workspace's files: a plugin's hooks and servers are code it runs."""
    out: list[Loosening] = []
    for layer in files.layers:
        table = layer.data.get("enabledPlugins") if layer.from_workspace else None
        for key, on in (table if isinstance(table, dict) else {}).items():
            if on is True:
                setting = ((layer.path, f"enabledPlugins.{key}"),)
                out.append(Loosening("plugin", f"plugin {key}", files.label(layer.path), setting))
    return out


def status_line_loosening(files: WorkspaceFiles) -> list[Loosening]:
    """A project's `statusLine` command: the TUI would run it after every turn."""
    out: list[Loosening] = []
    for layer in files.layers:
        value = layer.data.get("statusLine") if layer.from_workspace else None
        command = value.get("command") if isinstance(value, dict) else None
        if isinstance(command, str) and command.strip():
            out.append(
                Loosening(
                    "status_line",
                    f"status line command `{' '.join(command.split())[:200]}`",
                    files.label(layer.path),
                    ((layer.path, "statusLine"),),
                )
            )
    return out


# One function per feature that reads something loosening from the workspace's settings; the
# ones that read other files (`.mcp.json`, skills) add theirs here too, or pass extra loosenings
# to `assess` the way the guide probe does.
DETECTORS: tuple[Detector, ...] = (
    permission_mode_loosening,
    settings_mcp_servers,
    mcp_json_servers,
    meta_harness_loosening,
    enabled_plugins,
    status_line_loosening,
)


def find_loosenings(
    files: WorkspaceFiles, detectors: Iterable[Detector] = DETECTORS
) -> list[Loosening]:
    return [item for detect in detectors for item in detect(files)]


def guide_loosenings(outside: Iterable[OutsidePath], settings_file: str) -> list[Loosening]:
    """Project guide files, imports and `guides.extra_paths` (from `settings_file`) that lead
    out of the workspace."""
    out: list[Loosening] = []
    for item in outside:
        if item.kind == "import":
            out.append(Loosening("import", f"import {item.describe()}", item.source))
        elif item.kind == "extra_path":
            what = f"guides.extra_paths {item.describe()}"
            out.append(Loosening("guide_path", what, settings_file))
        else:  # the guide file itself is a link out of the workspace
            out.append(Loosening("guide_path", f"guide {item.describe()}", item.source))
    return out
