"""Plugins a trusted workspace enables that are not installed: the TUI offers each once (a
repository can suggest a plugin, never install one), adding the marketplace its settings name in
`extraKnownMarketplaces` when it is not known yet. The answer is remembered in
`$PERI_HOME/plugins/asked.json`, so the question does not come back at every start."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peri_cli.base.settings import SettingsLayer
from peri_cli.extensions.plugins.manifest import ManifestError, git_url
from peri_cli.extensions.plugins.registry import (
    PluginError,
    edit_object,
    marketplaces,
    plugins_dir,
    read_object,
    split_key,
)

ASKED_FILE = "asked.json"
SUGGESTED_KEY = "extraKnownMarketplaces"


@dataclass(frozen=True)
class PluginOffer:
    key: str
    marketplace_source: str  # "" when the marketplace is already known


def suggested_marketplaces(layers: Iterable[SettingsLayer], *, trusted: bool) -> dict[str, str]:
    """`extraKnownMarketplaces` as `name → source` (a git URL, `owner/repo` or a folder)."""
    found: dict[str, str] = {}
    for layer in layers:
        table = layer.data.get(SUGGESTED_KEY)
        if not isinstance(table, dict) or (layer.from_workspace and not trusted):
            continue
        for name, entry in table.items():
            source = _source(entry.get("source") if isinstance(entry, dict) else None)
            if source:
                found[str(name)] = source
    return found


def _source(value: Any) -> str:
    """Claude Code's shapes: {"source": "github", "repo"}, {"source": "git"|"url", "url"},
    {"source": "directory", "path"}."""
    if not isinstance(value, dict):
        return ""
    kind = value.get("source")
    if kind == "github" and isinstance(value.get("repo"), str):
        return str(value["repo"])
    if kind in ("git", "url") and isinstance(value.get("url"), str):
        try:
            return git_url(value["url"])
        except ManifestError:
            return ""
    if kind == "directory" and isinstance(value.get("path"), str):
        return str(value["path"])
    return ""


def offers(
    peri_home: Path, missing: Iterable[str], layers: Iterable[SettingsLayer], *, trusted: bool
) -> list[PluginOffer]:
    """What to offer now: each missing plugin not asked about before whose marketplace is
    known or suggested."""
    try:
        asked = set(read_object(plugins_dir(peri_home) / ASKED_FILE).get("asked") or [])
        known = marketplaces(peri_home)
    except PluginError:
        return []
    suggested = suggested_marketplaces(layers, trusted=trusted)
    out: list[PluginOffer] = []
    for key in missing:
        try:
            _, market = split_key(key)
        except PluginError:
            continue
        if key in asked or (market not in known and market not in suggested):
            continue
        out.append(PluginOffer(key, "" if market in known else suggested[market]))
    return out


def remember_asked(peri_home: Path, key: str) -> None:
    def change(data: dict[str, Any]) -> None:
        asked = [k for k in data.get("asked") or [] if isinstance(k, str)]
        data["asked"] = [*asked, key] if key not in asked else asked

    edit_object(plugins_dir(peri_home) / ASKED_FILE, change)
