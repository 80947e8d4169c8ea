"""What one installed plugin brings, read from its folder as Claude Code lays it out: folders of
commands, agents, skills and output styles, its hooks (`hooks/hooks.json` or the manifest's
`hooks`) and its MCP servers (`.mcp.json` or the manifest's `mcpServers`).

Paths a manifest names stay inside the plugin's folder (after symlinks); a part that is wrong
is left out with a problem naming its file, and the rest of the plugin still loads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peri_cli.base.safe_read import is_inside
from peri_cli.base.textsafe import visible
from peri_cli.extensions.plugins.manifest import (
    ManifestError,
    PluginManifest,
    read_json,
    read_plugin_manifest,
)

ROOT_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "PERI_PLUGIN_ROOT")
DEFAULT_FOLDERS = {
    "commands": "commands",
    "agents": "agents",
    "skills": "skills",
    "outputStyles": "output-styles",
}
HOOKS_FILE = "hooks/hooks.json"
MCP_FILE = ".mcp.json"


@dataclass(frozen=True)
class PluginParts:
    """One plugin's parts, every path absolute and inside `root`."""

    key: str  # "name@marketplace"
    name: str
    root: Path
    manifest: PluginManifest
    folders: dict[str, tuple[Path, ...]] = field(default_factory=dict)  # by part kind
    hooks: dict[str, Any] = field(default_factory=dict)  # Claude Code's `hooks` object
    hooks_file: Path | None = None
    mcp_servers: dict[str, Any] = field(default_factory=dict)  # root expanded, env added
    problems: tuple[str, ...] = ()

    @property
    def env(self) -> dict[str, str]:
        """What a hook or a server of this plugin gets in its environment."""
        return dict.fromkeys(ROOT_VARIABLES, str(self.root))

    def brings(self) -> dict[str, list[str]]:
        """What installing it adds, by kind, for the question the user answers."""
        found: dict[str, list[str]] = {}
        for kind, folders in self.folders.items():
            names = sorted(
                {p.stem if p.is_file() else p.name for d in folders for p in _entries(d)}
            )
            if names:
                found[kind] = names
        hooks = [
            f"{event}: {h.get('command', '?')}"
            for event, groups in self.hooks.items()
            if isinstance(groups, list)
            for g in groups
            if isinstance(g, dict)
            for h in (g.get("hooks") or [])
            if isinstance(h, dict)
        ]
        if hooks:
            found["hooks"] = hooks
        if self.mcp_servers:
            found["mcpServers"] = [
                f"{n}: {_server_line(c)}" for n, c in sorted(self.mcp_servers.items())
            ]
        return found


def _entries(folder: Path) -> list[Path]:
    try:
        return [p for p in sorted(folder.iterdir())[:500] if p.suffix == ".md" or p.is_dir()]
    except OSError:
        return []


def _server_line(config: Any) -> str:
    if not isinstance(config, dict):
        return "?"
    if isinstance(config.get("url"), str):
        return str(config["url"])
    args = config.get("args")
    args = args if isinstance(args, list) else []
    return " ".join(str(x) for x in [config.get("command", "?"), *args])[:300]


def read_parts(root: Path, key: str, fallback_name: str) -> PluginParts:
    """The parts of the plugin installed at `root`; a broken manifest is a ManifestError."""
    manifest = read_plugin_manifest(root, fallback_name)
    problems: list[str] = []
    folders = {
        kind: _folders(root, default, manifest.parts.get(kind), kind, problems)
        for kind, default in DEFAULT_FOLDERS.items()
    }
    hooks, hooks_file = _hooks(root, manifest.parts.get("hooks"), problems)
    servers = _servers(root, manifest.parts.get("mcpServers"), problems)
    return PluginParts(
        key, manifest.name, root, manifest, folders, hooks, hooks_file, servers, tuple(problems)
    )


def _inside(root: Path, value: object, where: str, problems: list[str]) -> Path | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}: expected a path like ./name; ignored")
        return None
    path = root / value
    if Path(value).is_absolute() or ".." in Path(value).parts or not is_inside(path, root):
        problems.append(f"{where}: {value!r} leads outside the plugin; ignored")
        return None
    return path


def _folders(
    root: Path, default: str, custom: object, kind: str, problems: list[str]
) -> tuple[Path, ...]:
    """The default folder when it is there, and the manifest's paths beside it (Claude Code:
    custom paths add to the default one)."""
    found: list[Path] = []
    if (root / default).is_dir() and is_inside(root / default, root):
        found.append(root / default)
    values = [custom] if isinstance(custom, str) else custom if isinstance(custom, list) else []
    if custom is not None and not values:
        problems.append(f"plugin.json: `{kind}` must be a path or a list of paths; ignored")
    for value in values:
        path = _inside(root, value, f"plugin.json: {kind}", problems)
        if path is not None and path.is_dir() and path not in found:
            found.append(path)
        elif path is not None and path.is_file() and path.suffix == ".md":
            found.append(path)  # one file named directly
    return tuple(found)


def _hooks(root: Path, custom: object, problems: list[str]) -> tuple[dict[str, Any], Path | None]:
    path: Path | None = root / HOOKS_FILE if (root / HOOKS_FILE).exists() else None
    inline: Any = None
    if isinstance(custom, str):
        path = _inside(root, custom, "plugin.json: hooks", problems)
    elif isinstance(custom, dict):
        inline = custom
    elif custom is not None:
        problems.append("plugin.json: `hooks` must be a path or an object; ignored")
    if inline is None and path is not None:
        try:
            inline = read_json(path, root)
        except ManifestError as e:
            problems.append(f"{e}; its hooks are not loaded")
            return {}, path
    if inline is None:
        return {}, None
    hooks = inline.get("hooks", inline) if isinstance(inline, dict) else None
    if not isinstance(hooks, dict):
        problems.append(f"{_shown(path, root)}: `hooks` must be an object; not loaded")
        return {}, path
    return hooks, path


def _servers(root: Path, custom: object, problems: list[str]) -> dict[str, Any]:
    raw: Any = None
    where = MCP_FILE
    if isinstance(custom, dict):
        raw, where = custom, "plugin.json: mcpServers"
    elif isinstance(custom, str):
        path = _inside(root, custom, "plugin.json: mcpServers", problems)
        raw, where = (_json_or_problem(path, root, problems), custom) if path else (None, custom)
    elif (root / MCP_FILE).exists():
        raw = _json_or_problem(root / MCP_FILE, root, problems)
    if raw is None:
        return {}
    servers = raw.get("mcpServers", raw) if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        problems.append(f"{where}: `mcpServers` must be an object; not loaded")
        return {}
    return {str(name): _expanded(config, root) for name, config in servers.items() if name}


def _json_or_problem(path: Path, root: Path, problems: list[str]) -> Any:
    try:
        return read_json(path, root)
    except ManifestError as e:
        problems.append(f"{e}; its servers are not loaded")
        return None


def _expanded(config: Any, root: Path) -> Any:
    """`${CLAUDE_PLUGIN_ROOT}` replaced in a server's command, args and env (the only text Peri
    expands), and both root variables added to its environment."""
    if not isinstance(config, dict):
        return config
    out = dict(config)

    def sub(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        for name in ROOT_VARIABLES:
            value = value.replace("${" + name + "}", str(root))
        return value

    if "command" in out:
        out["command"] = sub(out["command"])
    if isinstance(out.get("args"), list):
        out["args"] = [sub(a) for a in out["args"]]
    env = out.get("env")
    env = env if isinstance(env, dict) else {}
    out["env"] = {**dict.fromkeys(ROOT_VARIABLES, str(root)), **{k: sub(v) for k, v in env.items()}}
    return out


def _shown(path: Path | None, root: Path) -> str:
    if path is None:
        return "plugin.json: hooks"
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def describe(parts: PluginParts) -> str:
    """What the plugin brings, in lines for a question (the commands, hooks and servers it runs)."""
    version = f" {parts.manifest.version}" if parts.manifest.version else ""
    lines = [visible(f"{parts.key}{version}")]
    if parts.manifest.description:
        lines.append(f"  {visible(parts.manifest.description)}")
    for kind, names in parts.brings().items():
        lines.append(f"  {kind}:")
        lines += [f"    {visible(n)}" for n in names[:40]]
        if len(names) > 40:
            lines.append(f"    ... and {len(names) - 40} more")
    return "\n".join(lines)
