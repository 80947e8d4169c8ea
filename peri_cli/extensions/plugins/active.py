"""Which installed plugins a session uses: `enabledPlugins` of every settings file, later files
winning name by name, a workspace's files only once it is trusted (a repository can suggest a
plugin, never switch one on by itself). An enabled plugin that is not installed is named, so
the face can offer to install it (the TUI) or warn (headless)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.settings import SettingsLayer
from peri_cli.extensions.plugins.manifest import ManifestError
from peri_cli.extensions.plugins.parts import PluginParts, read_parts
from peri_cli.extensions.plugins.registry import PluginError, installed

ENABLED_KEY = "enabledPlugins"


@dataclass
class ActivePlugins:
    plugins: list[PluginParts] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # enabled, not installed
    withheld: list[str] = field(default_factory=list)  # enabled by a workspace not trusted
    problems: list[str] = field(default_factory=list)

    def warnings(self) -> list[str]:
        out = [f"plugin {p.key}: {problem}" for p in self.plugins for problem in p.problems]
        out += self.problems
        out += [
            f"plugin {key} is enabled but not installed; `peri plugin install {key}` installs it"
            for key in self.missing
        ]
        return out


def enabled_keys(layers: Iterable[SettingsLayer], *, trusted: bool) -> tuple[list[str], list[str]]:
    """The plugins switched on, and those a workspace file would switch on but may not yet."""
    state: dict[str, bool] = {}
    withheld: list[str] = []
    for layer in layers:
        table = layer.data.get(ENABLED_KEY)
        if not isinstance(table, dict):
            continue
        for key, on in table.items():
            if not isinstance(on, bool):
                continue
            if layer.from_workspace and not trusted:
                if on and not state.get(key):
                    withheld.append(key)
                continue
            state[key] = on
    return [k for k, on in state.items() if on], [k for k in withheld if not state.get(k)]


def active_plugins(
    peri_home: Path, layers: Iterable[SettingsLayer], *, trusted: bool
) -> ActivePlugins:
    """The enabled plugins' parts, read from their installed copies; never raises."""
    found = ActivePlugins()
    keys, found.withheld = enabled_keys(layers, trusted=trusted)
    if not keys:
        return found
    try:
        have = installed(peri_home)
    except PluginError as e:
        found.problems.append(str(e))
        return found
    for key in keys:
        item = have.get(key)
        if item is None or not item.root.is_dir():
            found.missing.append(key)
            continue
        try:
            found.plugins.append(read_parts(item.root, key, item.name))
        except ManifestError as e:
            found.problems.append(f"plugin {key}: {e}; not loaded")
    return found
