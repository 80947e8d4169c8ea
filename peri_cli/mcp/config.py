"""MCP server entries in Claude Code's `mcpServers` format, read with their scope.

User servers come from `$PERI_HOME/settings.json`; project servers from the workspace's `.mcp.json`
and its `.peri/settings.json` / `.peri/settings.local.json` (later wins on a name). The settings
files are read by `base/settings.py` (which keeps a repository's servers apart until the workspace
is trusted); `.mcp.json` is read here. A project entry runs commands on the user's machine, so the
scope travels with every entry (see `plan.py`). A malformed entry or file is reported as a problem
and skipped; it never stops Peri.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from peri_cli.base.childenv import is_credential
from peri_cli.base.mcp_entry import Transport, describe_entry, describe_line, entry_transport
from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.base.settings import McpServerSetting

Scope = Literal["user", "project"]
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerConfig:
    """One server as configured, its `${VAR}`s expanded; `raw` is the entry as written."""

    name: str
    scope: Scope
    source: Path
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    always_load: bool = False
    # An in-process server (`transport == "sdk"`): what `inprocess.lowlevel_of` serves.
    instance: Any = field(default=None, repr=False, compare=False)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # Peri's credential variables a project entry named; they were left empty (see `_Expander`).
    withheld: tuple[str, ...] = ()

    def fingerprint(self) -> str:
        """A stable digest of the entry as written, so a trust decision can notice a change."""
        # (an in-process server's instance is no JSON: its identity stands for it)
        text = json.dumps(self.raw, sort_keys=True, ensure_ascii=False, default=_identity)
        return hashlib.sha256(f"{self.name}\0{text}".encode()).hexdigest()[:16]

    def describe(self) -> str:
        """Everything that decides what it runs and where data goes, as written (`${VAR}`
        unexpanded), on one line: the words the trust dialog uses for the same entry."""
        return describe_line(self.raw)

    def details(self) -> tuple[tuple[str, str], ...]:
        """`describe` as (label, text) pairs, for a question that shows one per line."""
        return tuple(describe_entry(self.raw))


@dataclass(frozen=True)
class ConfigProblem:
    """A file or entry that was skipped, in one line naming where it is."""

    source: Path
    server: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.source}: mcpServers.{self.server}" if self.server else str(self.source)
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class ServerConfigs:
    """Every valid entry, lowest precedence first (user, then project files), plus the problems."""

    servers: tuple[ServerConfig, ...] = ()
    problems: tuple[ConfigProblem, ...] = ()


class EntryError(ValueError):
    """An entry that cannot be used; the message says which field and why."""


MCP_JSON = ".mcp.json"


def gather_configs(
    workspace: Path,
    env: Mapping[str, str],
    settings_servers: Iterable[McpServerSetting] = (),
) -> ServerConfigs:
    """Every entry, lowest precedence first: the user's settings, the workspace's `.mcp.json`,
    then the workspace's settings files (`settings_servers` is `LoadedSettings.mcp_servers`)."""
    user = [s for s in settings_servers if not s.from_workspace]
    project = [s for s in settings_servers if s.from_workspace]
    parts = [
        from_settings(user, workspace, env),
        load_mcp_json(workspace, env),
        from_settings(project, workspace, env),
    ]
    return ServerConfigs(
        tuple(c for p in parts for c in p.servers), tuple(x for p in parts for x in p.problems)
    )


def from_settings(
    servers: Iterable[McpServerSetting], workspace: Path, env: Mapping[str, str]
) -> ServerConfigs:
    """Entries the settings files hold, each parsed with the scope of its file."""
    found: list[ServerConfig] = []
    problems: list[ConfigProblem] = []
    for server in servers:
        scope: Scope = "project" if server.from_workspace else "user"
        source = Path(server.source.where or "settings")
        try:
            found.append(
                parse_entry(server.name, server.config, scope, source, env=env, workspace=workspace)
            )
        except EntryError as e:
            problems.append(ConfigProblem(source, server.name, str(e)))
    return ServerConfigs(tuple(found), tuple(problems))


def load_mcp_json(workspace: Path, env: Mapping[str, str]) -> ServerConfigs:
    """The workspace's `.mcp.json`: nothing when absent, a problem when broken."""
    path = workspace / MCP_JSON
    try:
        data = _read_object(path, workspace)
    except EntryError as e:
        return ServerConfigs(problems=(ConfigProblem(path, None, str(e)),))
    if data is None:
        return ServerConfigs()
    return parse_servers(data.get("mcpServers"), "project", path, env, workspace)


def parse_servers(
    block: Any, scope: Scope, source: Path, env: Mapping[str, str], workspace: Path
) -> ServerConfigs:
    """The `mcpServers` object of one file; each bad entry is a problem, the rest still load."""
    if block is None:
        return ServerConfigs()
    if not isinstance(block, dict):
        problem = ConfigProblem(source, None, _expected("mcpServers", block))
        return ServerConfigs(problems=(problem,))
    servers: list[ServerConfig] = []
    problems: list[ConfigProblem] = []
    for name, entry in block.items():
        try:
            servers.append(parse_entry(name, entry, scope, source, env=env, workspace=workspace))
        except EntryError as e:
            problems.append(ConfigProblem(source, name, str(e)))
    return ServerConfigs(tuple(servers), tuple(problems))


def parse_entry(
    name: str,
    entry: Any,
    scope: Scope,
    source: Path,
    *,
    env: Mapping[str, str],
    workspace: Path,
) -> ServerConfig:
    """One entry, validated and expanded, or EntryError."""
    if not name.strip() or any(ord(c) < 0x20 for c in name):
        raise EntryError("a server needs a printable, non-empty name")
    if not isinstance(entry, dict):
        raise EntryError(_expected("the entry", entry))
    transport = entry_transport(entry)
    if transport is None:
        raise EntryError(f'type: expected "stdio", "http" or "sse", got {_show(entry["type"])}')
    if transport == "sdk":
        return _in_process(name, entry, scope, source)
    always_load = entry.get("alwaysLoad", False)
    if not isinstance(always_load, bool):
        raise EntryError(_expected("alwaysLoad", always_load, "true or false"))
    x = _Expander(env, withhold_credentials=scope == "project")
    common: dict[str, Any] = {
        "name": name,
        "scope": scope,
        "source": source,
        "transport": transport,
        "always_load": always_load,
        "raw": entry,
    }
    if transport == "stdio":
        command = x.expand(_string(entry, "command", required=True))
        if not command.strip():
            raise EntryError("command: must not be empty")
        args = tuple(x.expand(a) for a in _strings(entry, "args"))
        server_env = {k: x.expand(v) for k, v in _string_map(entry, "env").items()}
        cwd_text = x.expand(_string(entry, "cwd"))
        cwd = (workspace / Path(cwd_text).expanduser()) if cwd_text else None
        x.check()
        return ServerConfig(
            **common, command=command, args=args, env=server_env, cwd=cwd, withheld=x.withheld()
        )
    url = x.expand(_string(entry, "url", required=True))
    if not re.match(r"^https?://[^/\s]+", url):
        raise EntryError(f"url: expected an http:// or https:// address, got {_show(url)}")
    headers = {k: x.expand(v) for k, v in _string_map(entry, "headers").items()}
    x.check()
    return ServerConfig(**common, url=url, headers=headers, withheld=x.withheld())


def _in_process(name: str, entry: dict[str, Any], scope: Scope, source: Path) -> ServerConfig:
    """A program's own server (`create_sdk_mcp_server`): only a program can pass one, in
    `PeriOptions.mcp_servers` (a file's JSON cannot hold the Python object it needs)."""
    from peri_cli.mcp.inprocess import is_in_process

    instance = entry.get("instance")
    if scope != "user" or not is_in_process(instance):
        raise EntryError(
            'type "sdk": needs the `instance` create_sdk_mcp_server() made, passed by a program '
            f"in PeriOptions.mcp_servers (got {_show(instance)})"
        )
    return ServerConfig(name, scope, source, "sdk", instance=instance, raw=entry)


def _identity(value: object) -> str:
    return f"<{type(value).__name__} {id(value):x}>"


class _Expander:
    """`${VAR}` and `${VAR:-default}` from the environment; unset names are collected.

    A project entry (written by the repository) never expands Peri's own credentials
    (`ANTHROPIC_*`, `OPENAI_*`): every child process starts without them, and an entry that named
    them could send the user's key to a URL or a process the repository chose. They become empty
    (not a default the repository wrote either) and are listed for a warning; the user's own
    entries may name them."""

    def __init__(self, env: Mapping[str, str], *, withhold_credentials: bool = False) -> None:
        self.env = env
        self.withhold_credentials = withhold_credentials
        self.missing: list[str] = []
        self._withheld: list[str] = []

    def expand(self, text: str) -> str:
        return _VAR.sub(self._one, text)

    def withheld(self) -> tuple[str, ...]:
        return tuple(self._withheld)

    def _one(self, m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if self.withhold_credentials and is_credential(name):
            if name not in self._withheld:
                self._withheld.append(name)
            return ""
        value = self.env.get(name)
        if value is not None and (value or default is None):
            return value
        if default is not None:
            return default
        if name not in self.missing:
            self.missing.append(name)
        return ""

    def check(self) -> None:
        if self.missing:
            names = ", ".join(self.missing)
            raise EntryError(f"needs environment variable {names}, which is not set")


def _string(entry: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = entry.get(key)
    if value is None:
        if required:
            raise EntryError(f"{key}: required")
        return ""
    if not isinstance(value, str):
        raise EntryError(_expected(key, value, "a string"))
    return value


def _strings(entry: dict[str, Any], key: str) -> list[str]:
    value = entry.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise EntryError(_expected(key, value, "a list of strings"))
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise EntryError(_expected(f"{key}[{i}]", item, "a string"))
    return list(value)


def _string_map(entry: dict[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EntryError(_expected(key, value, "an object of strings"))
    for k, v in value.items():
        if not isinstance(v, str):
            raise EntryError(_expected(f"{key}.{k}", v, "a string"))
    return dict(value)


def _read_object(path: Path, inside: Path) -> dict[str, Any] | None:
    """The file's top-level object through the shared guard (a regular file inside the workspace,
    not huge); None when there is no file."""
    try:
        text = read_text(path, inside=inside)
    except SafeReadError as e:
        if e.missing:
            return None
        raise EntryError(f"{e.reason}; ignored") from e
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise EntryError(f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    if not isinstance(data, dict):
        raise EntryError("expected a JSON object at the top level")
    return data


def _expected(key: str, value: Any, what: str = "an object") -> str:
    return f"{key}: expected {what}, got {_show(value)}"


def _show(value: Any) -> str:
    """A short rendering of a bad value (long strings are described: they may be secrets)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value) if len(value) <= 40 else f"a string of {len(value)} characters"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__
