"""Where each setting in force came from, for `/status` and `peri config --show-origin`: one row
per value a settings file or a variable set (a built-in default has none), the Claude Code files
marked, and what a workspace that is not trusted does not get marked as not applied.

Most keys have one value, the last file's (`LoadedSettings.sources`). `permissions`, `hooks` and
`sandbox` are read file by file (every file's rules and hooks count; the sandbox's lists add up
and an untrusted file may only narrow it), so they get a row per file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from peri_cli.base.mcp_entry import describe_entry
from peri_cli.base.redact import redact_url
from peri_cli.base.settings import LoadedSettings, SettingsLayer
from peri_cli.base.settings_sandbox import flatten, narrows

PER_FILE = ("permissions", "hooks", "sandbox")


@dataclass(frozen=True)
class OriginRow:
    """One value and where it came from."""

    key: str  # dotted: "model", "compact.protected_turns", "permissions.deny"
    value: Any
    scope: str  # "user", "project", "local" or "env"
    origin: str  # the file's path or the variable's name
    claude_code: bool  # from one of Claude Code's files
    applied: bool  # False: a workspace file's loosening, held back until it is trusted

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """`key = value  (file)`; the text is the files': callers make it visible."""
        value = self.value if isinstance(self.value, str) else json.dumps(self.value)
        held = "" if self.applied else "; not applied: the workspace is not trusted"
        return f"{self.key} = {value}  ({self.origin}{held})"


def file_line(layer: SettingsLayer) -> str:
    """One settings file read: its scope and path, Claude Code's marked."""
    return f"{layer.scope:<8} {layer.path}{'  (Claude Code)' if layer.claude_code else ''}"


def origin_rows(loaded: LoadedSettings, *, trusted: bool) -> list[OriginRow]:
    """Every value set by a file or a variable, in the order of the settings' keys."""
    claude = {str(layer.path) for layer in loaded.layers if layer.claude_code}
    merged = loaded.settings.model_dump()
    rows: list[OriginRow] = []
    for dotted, source in loaded.sources.items():
        if dotted.partition(".")[0] in PER_FILE:
            continue
        value = _shown(dotted, _value_at(merged, dotted))
        rows.append(
            OriginRow(dotted, value, source.scope, str(source), source.where in claude, True)
        )
    for server in loaded.mcp_servers:
        if server.from_workspace:  # (the user's own are in `sources`)
            where = server.source.where
            key = f"mcpServers.{server.name}"
            rows.append(
                OriginRow(key, _server(server.config), server.source.scope, where, False, trusted)
            )
    for layer in loaded.layers:
        rows += _per_file(layer, trusted=trusted)
    by_path = {item.path: item for item in loaded.layers}
    for path, dotted in loaded.withheld:
        if (held := by_path.get(path)) is not None:
            value = _shown(dotted, _value_at(dict(held.data), dotted))
            rows.append(OriginRow(dotted, value, held.scope, str(path), held.claude_code, False))
    order = {name: n for n, name in enumerate(type(loaded.settings).model_fields)}
    return sorted(rows, key=lambda row: order.get(row.key.partition(".")[0], len(order)))


def _per_file(layer: SettingsLayer, *, trusted: bool) -> list[OriginRow]:
    """The file's `permissions`, `hooks` and `sandbox`, one row each of their entries."""
    out: list[OriginRow] = []
    held = layer.from_workspace and not trusted

    def row(key: str, value: Any, applied: bool) -> None:
        where = str(layer.path)
        out.append(OriginRow(key, value, layer.scope, where, layer.claude_code, applied))

    permissions = layer.data.get("permissions")
    for name, value in (permissions if isinstance(permissions, Mapping) else {}).items():
        row(f"permissions.{name}", value, not (held and name == "allow"))
    hooks = layer.data.get("hooks")
    for event, value in (hooks if isinstance(hooks, Mapping) else {}).items():
        row(f"hooks.{event}", value, not held)
    sandbox = layer.data.get("sandbox")
    for dotted, value in flatten(sandbox) if isinstance(sandbox, Mapping) else []:
        row(f"sandbox.{dotted}", value, not held or narrows(dotted, value))
    return out


def _value_at(node: Any, dotted: str) -> Any:
    """The value at `dotted` (an entry's own name may hold dots: "mcpServers.my.server")."""
    while isinstance(node, Mapping):
        if dotted in node:
            return node[dotted]
        head, _, rest = dotted.partition(".")
        if not rest or head not in node:
            return None
        node, dotted = node[head], rest
    return None


def _shown(dotted: str, value: Any) -> Any:
    return _server(value) if dotted.startswith("mcpServers.") else value


def _server(entry: Any) -> str:
    """A server entry in one line: what it runs or where it connects, and the names of its
    variables and headers, not their values (a table of settings is no place for a token)."""
    parts = []
    for label, text in describe_entry(entry):
        shown = text.partition("=")[0] if label in ("env", "header") else text
        parts.append(f"{label}: {redact_url(shown)}")
    return "; ".join(parts)
