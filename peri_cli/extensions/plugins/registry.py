"""Where plugins live under `$PERI_HOME/plugins/`: the known marketplaces
(`known_marketplaces.json`), the installed plugins (`installed.json`: version, source and the
fingerprint of what runs code), each installed copy at `<marketplace>/<plugin-name>/` (the
version is in the file, not the path: a plugin may import its own package by its folder's
name), and the clones of git marketplaces in `.marketplaces/<name>/`.

Both files are edited under a lock and replaced atomically (two `peri plugin` at once both land)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peri_cli.extensions.plugins.manifest import valid_name
from peri_cli.permissions.rulefile import RuleFileError, edit_settings_file

PLUGINS_DIR = "plugins"
MARKETPLACES_FILE = "known_marketplaces.json"
INSTALLED_FILE = "installed.json"
CLONES_DIR = ".marketplaces"
STAGING_DIR = ".staging"


class PluginError(Exception):
    """A plugin operation that did not happen; the message says why and what to do."""


@dataclass(frozen=True)
class KnownMarketplace:
    name: str
    source: str  # as the user gave it
    kind: str  # "folder" (read in place) or "git" (cloned)
    path: Path  # where its files are read


@dataclass(frozen=True)
class Installed:
    key: str  # "name@marketplace"
    version: str
    root: Path
    fingerprint: dict[str, str]

    @property
    def name(self) -> str:
        return self.key.split("@", 1)[0]

    @property
    def marketplace(self) -> str:
        return self.key.split("@", 1)[1]


def plugins_dir(peri_home: Path) -> Path:
    return peri_home / PLUGINS_DIR


def plugin_root(peri_home: Path, marketplace: str, name: str) -> Path:
    return plugins_dir(peri_home) / marketplace / name


def split_key(key: str) -> tuple[str, str]:
    name, at, marketplace = key.partition("@")
    if not (at and name and marketplace):
        raise PluginError(f"name a plugin as NAME@MARKETPLACE, not {key!r}")
    return name, marketplace


def read_object(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        data = json.loads(text) if text.strip() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PluginError(f"{path}: unreadable ({e}); fix or remove it") from None
    return data if isinstance(data, dict) else {}


def edit_object(path: Path, change: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        edit_settings_file(path, change)
    except RuleFileError as e:
        raise PluginError(str(e)) from None


def marketplaces(peri_home: Path) -> dict[str, KnownMarketplace]:
    data = read_object(plugins_dir(peri_home) / MARKETPLACES_FILE)
    out: dict[str, KnownMarketplace] = {}
    for name, entry in data.items():
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            kind = str(entry.get("kind", "folder"))
            out[name] = KnownMarketplace(
                name, str(entry.get("source", "")), kind, Path(entry["path"])
            )
    return out


def remember_marketplace(peri_home: Path, known: KnownMarketplace) -> None:
    entry = {"source": known.source, "kind": known.kind, "path": str(known.path)}
    edit_object(plugins_dir(peri_home) / MARKETPLACES_FILE, lambda d: d.update({known.name: entry}))


def forget_marketplace(peri_home: Path, name: str) -> None:
    edit_object(plugins_dir(peri_home) / MARKETPLACES_FILE, lambda d: d.pop(name, None))


def installed(peri_home: Path) -> dict[str, Installed]:
    data = read_object(plugins_dir(peri_home) / INSTALLED_FILE)
    out: dict[str, Installed] = {}
    for key, entry in data.items():
        name, _, marketplace = key.partition("@")
        if not (isinstance(entry, dict) and valid_name(name) and valid_name(marketplace)):
            continue  # an entry written by hand, or by something else: not a plugin here
        prints = entry.get("fingerprint")
        out[key] = Installed(
            key,
            str(entry.get("version", "")),
            plugin_root(peri_home, marketplace, name),
            {str(k): str(v) for k, v in prints.items()} if isinstance(prints, dict) else {},
        )
    return out


def record_installed(peri_home: Path, item: Installed, source: str) -> None:
    entry = {"version": item.version, "source": source, "fingerprint": item.fingerprint}
    edit_object(plugins_dir(peri_home) / INSTALLED_FILE, lambda d: d.update({item.key: entry}))


def forget_installed(peri_home: Path, key: str) -> None:
    edit_object(plugins_dir(peri_home) / INSTALLED_FILE, lambda d: d.pop(key, None))


def set_enabled(settings_file: Path, key: str, enabled: bool | None) -> None:
    """`enabledPlugins[key]` in a settings file: True, False, or (None) no entry."""

    def change(data: dict[str, Any]) -> None:
        table = data.get("enabledPlugins")
        table = dict(table) if isinstance(table, dict) else {}
        if enabled is None:
            table.pop(key, None)
        else:
            table[key] = enabled
        data["enabledPlugins"] = table

    edit_object(settings_file, change)


def enabled_table(settings_file: Path) -> dict[str, bool]:
    """`enabledPlugins` as the user's settings file holds it now (empty when unreadable)."""
    try:
        table = read_object(settings_file).get("enabledPlugins")
    except PluginError:
        return {}
    return {k: v for k, v in (table or {}).items() if isinstance(v, bool)}
