"""Claude Code's plugin and marketplace files, read as untrusted input: a marketplace's
`.claude-plugin/marketplace.json` (its name and the plugins it lists, each with a source) and a
plugin's `.claude-plugin/plugin.json` (its name, version, description and custom part paths).

Every file is read with a size cap, not through a FIFO or a symlink out of its folder; anything
wrong is a `ManifestError` naming the file and the key, never a traceback."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peri_cli.base.safe_read import SafeReadError, read_text

MANIFEST_DIR = ".claude-plugin"
MARKETPLACE_FILE = f"{MANIFEST_DIR}/marketplace.json"
PLUGIN_FILE = f"{MANIFEST_DIR}/plugin.json"
MAX_MANIFEST_BYTES = 1 << 20
MAX_PLUGINS = 1_000
# A name becomes a folder and a command prefix: letters, digits, `-`, `_`, `.`, never `..`.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
PART_KEYS = ("commands", "agents", "skills", "hooks", "mcpServers", "outputStyles")


class ManifestError(Exception):
    """A manifest that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class PluginSource:
    """Where a listed plugin's files are: a folder inside the marketplace, or a git repository."""

    path: str = ""  # relative to the marketplace's root
    git: str = ""  # a URL git can clone
    ref: str = ""  # a branch or tag of that repository, when named

    def describe(self) -> str:
        return self.path or self.git + (f"#{self.ref}" if self.ref else "")


@dataclass(frozen=True)
class ListedPlugin:
    name: str
    source: PluginSource
    description: str = ""
    version: str = ""


@dataclass(frozen=True)
class Marketplace:
    name: str
    plugins: tuple[ListedPlugin, ...]
    problems: tuple[str, ...] = ()  # entries skipped, each naming why


@dataclass(frozen=True)
class PluginManifest:
    name: str
    version: str = ""
    description: str = ""
    # Custom part paths (relative to the plugin's root), or inline parts (hooks, mcpServers).
    parts: dict[str, Any] = field(default_factory=dict)


def valid_name(value: object) -> bool:
    return isinstance(value, str) and NAME.fullmatch(value) is not None and ".." not in value


def read_json(path: Path, root: Path) -> Any:
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    try:
        text = read_text(path, max_bytes=MAX_MANIFEST_BYTES, inside=root)
    except SafeReadError as e:
        raise ManifestError(f"{shown}: {e.reason}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ManifestError(f"{shown}: not valid JSON ({e.msg}, line {e.lineno})") from None


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return " ".join(value.split())[:500] if isinstance(value, str) else ""


def read_marketplace(root: Path) -> Marketplace:
    """The marketplace at `root`; entries that are wrong are skipped with a problem each."""
    data = read_json(root / MARKETPLACE_FILE, root)
    if not isinstance(data, dict):
        raise ManifestError(f"{MARKETPLACE_FILE}: expected an object")
    name = data.get("name")
    if not valid_name(name):
        raise ManifestError(
            f"{MARKETPLACE_FILE}: `name` must be a plain name (letters, digits, -_.)"
        )
    listed = data.get("plugins")
    if not isinstance(listed, list):
        raise ManifestError(f"{MARKETPLACE_FILE}: `plugins` must be a list")
    plugins: list[ListedPlugin] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(listed[:MAX_PLUGINS]):
        where = f"{MARKETPLACE_FILE}: plugins[{i}]"
        try:
            plugin = _listed(entry, where)
        except ManifestError as e:
            problems.append(f"{e}; skipped")
            continue
        if plugin.name in seen:
            problems.append(f"{where}: `{plugin.name}` is listed twice; the first is used")
            continue
        seen.add(plugin.name)
        plugins.append(plugin)
    return Marketplace(str(name), tuple(plugins), tuple(problems))


def _listed(entry: object, where: str) -> ListedPlugin:
    if not isinstance(entry, dict):
        raise ManifestError(f"{where}: expected an object")
    name = entry.get("name")
    if not valid_name(name):
        raise ManifestError(f"{where}: `name` must be a plain name")
    source = _source(entry.get("source"), f"{where}.source")
    return ListedPlugin(str(name), source, _text(entry, "description"), _text(entry, "version"))


def _source(value: object, where: str) -> PluginSource:
    """Claude Code's source shapes: "./path", {"source": "github", "repo": "o/r"}, or
    {"source": "url" | "git", "url": ...}, each with an optional `ref`."""
    if isinstance(value, str):
        return PluginSource(path=_relative(value, where))
    if not isinstance(value, dict):
        raise ManifestError(f"{where}: expected a relative path or an object")
    kind, ref = value.get("source"), value.get("ref")
    ref = ref if isinstance(ref, str) and re.fullmatch(r"[A-Za-z0-9][\w./-]{0,200}", ref) else ""
    if kind == "github" and isinstance(value.get("repo"), str):
        repo = value["repo"]
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise ManifestError(f"{where}.repo: expected owner/name")
        return PluginSource(git=f"https://github.com/{repo}.git", ref=ref)
    if kind in ("url", "git") and isinstance(value.get("url"), str):
        return PluginSource(git=git_url(value["url"], where), ref=ref)
    raise ManifestError(f"{where}: unknown source kind {json.dumps(kind)[:40]}")


def _relative(value: str, where: str) -> str:
    parts = Path(value).parts
    if not value or Path(value).is_absolute() or ".." in parts:
        raise ManifestError(f"{where}: a path inside the marketplace, like ./plugins/name")
    return str(Path(value))


def git_url(value: str, where: str = "source") -> str:
    """A URL git may clone: https, ssh, git@host:path or file; never an option (`-u…`)."""
    value = value.strip()
    ok = re.match(r"(https|ssh|git|file)://", value) or re.match(r"[\w.-]+@[\w.-]+:", value)
    if not ok or value.startswith("-") or any(c.isspace() or ord(c) < 32 for c in value):
        raise ManifestError(f"{where}: not a git URL: {value[:80]!r}")
    return value


def read_plugin_manifest(root: Path, fallback_name: str) -> PluginManifest:
    """The plugin at `root`: its manifest, or (none, as Claude Code allows) its folder's name."""
    if not (root / PLUGIN_FILE).exists():
        return PluginManifest(fallback_name)
    data = read_json(root / PLUGIN_FILE, root)
    if not isinstance(data, dict):
        raise ManifestError(f"{PLUGIN_FILE}: expected an object")
    name = data.get("name", fallback_name)
    if not valid_name(name):
        raise ManifestError(f"{PLUGIN_FILE}: `name` must be a plain name")
    parts = {k: data[k] for k in PART_KEYS if k in data}
    return PluginManifest(str(name), _text(data, "version"), _text(data, "description"), parts)
