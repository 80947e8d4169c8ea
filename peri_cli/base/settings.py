"""Settings: `$PERI_HOME/settings.json` (user), `.peri/settings.json` (project),
`.peri/settings.local.json` (project, personal) and the environment.

Precedence, lowest first: built-in defaults, the user file, the project file, the local file (key
by key, nested objects too), then the environment. Command-line flags beat all of these; the CLI
applies them. Every value keeps the file it came from (`LoadedSettings.sources`). The two project
files are repository files: what they would loosen is withheld until the workspace is trusted
(`permissions/trust.py` decides which keys; `withhold` names them). Unknown keys warn; a wrong
type is a SettingsError naming the file and the dotted key (`settings_check` reads and checks one
file, `settings_env` reads the variables; this module is the schema and the merge).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from peri_cli.base import first_look  # (stdlib only: the first frame reads the files)
from peri_cli.base.first_look import PreRead
from peri_cli.base.settings_check import (
    SettingsError,
    describe,
    drop_unknown,
    read_json_object,
    section_type,
)
from peri_cli.base.settings_env import compact_threshold_from_env, env_values
from peri_cli.base.settings_sandbox import SandboxSettings

SETTINGS_FILE = first_look.SETTINGS_FILE
LOCAL_SETTINGS_FILE = first_look.LOCAL_SETTINGS_FILE
PROJECT_DIR = first_look.PROJECT_DIR
peri_home_from_env = first_look.peri_home_from_env

Provider = Literal["anthropic", "openai"]
PermissionMode = Literal["default", "accept-edits", "plan", "bypass"]
Scope = Literal["user", "project", "local"]
WORKSPACE_SCOPES: tuple[Scope, ...] = ("project", "local")

# A settings value in one file: (the file, the dotted key, e.g. "permission_mode" or
# "mcpServers.db"). Trust names the ones to withhold this way.
SettingKey = tuple[Path, str]


class _Section(BaseModel):
    # Strict: JSON has real types, so "3" is not an integer and "yes" is not a boolean.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


class CompactSettings(_Section):
    """Compaction (PRODUCT §4). Shares are of the model's context window."""

    micro_compact_threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    auto_compact_threshold: float = Field(default=0.95, ge=0.0, le=1.0)
    # Micro frees down to this share (hysteresis), so it fires rarely and in large steps.
    micro_low_water: float = Field(default=0.2, ge=0.0, le=1.0)
    protected_turns: int = Field(default=3, ge=0)
    # The last `protected_turns` turns are protected only up to this share, newest parts first.
    protected_turns_budget: float = Field(default=0.25, ge=0.0, le=1.0)
    # The newest tool results that are always whole.
    keep_tool_results: int = Field(default=3, ge=0)
    tool_result_keep_chars: int = Field(default=200, ge=0)
    # Full keeps what the user typed, verbatim, up to this share (and at most the tokens below).
    user_text_budget: float = Field(default=0.10, ge=0.0, le=1.0)
    user_text_max_tokens: int = Field(default=20_000, ge=0)


class GuideSettings(_Section):
    extra_paths: list[str] = Field(default_factory=list)
    budget_bytes: int = Field(default=40_000, gt=0)


class StatusLineSettings(_Section):
    """Claude Code's `statusLine`: a command whose first line of output the TUI shows under the
    prompt (`command` empty: none)."""

    type: Literal["command"] = "command"
    command: str = ""
    padding: int = Field(default=0, ge=0, le=40)  # cells before the line


class Settings(_Section):
    """The resolved settings a session is built from."""

    model: str | None = None
    provider: Provider | None = None
    permission_mode: PermissionMode = "default"
    compact: CompactSettings = Field(default_factory=CompactSettings)
    # Legacy switch from before Micro compaction existed; accepted, and Micro is what it means now.
    smart_compact_enabled: bool | None = None
    guides: GuideSettings = Field(default_factory=GuideSettings)
    meta_harness: dict[str, bool] = Field(default_factory=dict)
    # The user's servers only; a project file's are kept apart (LoadedSettings.mcp_servers).
    mcpServers: dict[str, Any] = Field(default_factory=dict)  # the key as written in the file
    context_window: int | None = Field(default=None, gt=0)
    disable_compact: bool = False
    disable_auto_compact: bool = False
    # Extra environment variables removed from every child process (on top of provider keys).
    # Every file's list counts: a later file can add names, never take one back.
    scrub_env: list[str] = Field(default_factory=list)
    # Claude Code's `permissions` ({allow, ask, deny}) and `hooks`; read per file
    # (permissions/rule_sources.py, extensions/hooks.py), because a later file adds to an earlier
    # one's rules instead of replacing them.
    permissions: dict[str, Any] = Field(default_factory=dict)
    hooks: dict[str, Any] = Field(default_factory=dict)
    # The longest wait Peri accepts from a server's retry-after before failing with a message.
    retry_max_wait_seconds: float = Field(default=60.0, ge=0.0)
    # How the TUI tells an unfocused terminal that an approval, a question or an ended turn
    # waits (Claude Code's values, `tui/notify.py`); None: `notifications` decides (false is
    # `notifications_disabled`, Peri's older switch).
    preferredNotifChannel: (
        Literal["auto", "iterm2", "ghostty", "kitty", "terminal_bell", "notifications_disabled"]
        | None
    ) = None
    notifications: bool = True
    # Offer the TodoWrite task list tool (Claude Code's key); false drops it from new sessions.
    todoTool: bool = True
    # Claude Code's output style for new sessions (a name: `extensions/output_styles.py`).
    outputStyle: str | None = None
    statusLine: StatusLineSettings = Field(default_factory=StatusLineSettings)
    # The Bash sandbox (CONTRACT.md §10). This is the plain merge; what a session uses comes from
    # `settings_sandbox.merge_sandbox`, which lets an untrusted workspace only narrow it.
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    # Claude Code's plugin switches ({"name@marketplace": true}) and marketplaces a file
    # suggests; read per file (`extensions/plugins/active.py`): a project's wait for trust.
    enabledPlugins: dict[str, bool] = Field(default_factory=dict)
    extraKnownMarketplaces: dict[str, Any] = Field(default_factory=dict)
    # Read Claude Code's settings files too (`claude_settings.py`); only the user's own file and
    # PERI_CLAUDE_CODE_SETTINGS decide, so a repository cannot drop the user's Claude Code rules.
    claudeCodeSettings: bool = True


# Lists that add up across files instead of the later file replacing the earlier one: each only
# makes Peri stricter, so no file may shorten another's.
_UNION_KEYS = frozenset({"scrub_env"})


@dataclass(frozen=True)
class SettingsLayer:
    """One settings file as read: its known keys, already checked against the types."""

    scope: Scope
    path: Path
    data: Mapping[str, Any]
    claude_code: bool = False  # one of Claude Code's files, read below Peri's of the same scope

    @property
    def from_workspace(self) -> bool:
        """A repository file: what it would loosen waits for workspace trust."""
        return self.scope in WORKSPACE_SCOPES


@dataclass(frozen=True)
class Source:
    """Where a setting's value came from: a built-in default, a file, or a variable."""

    scope: Literal["default", "user", "project", "local", "env"]
    where: str = ""  # the file's path or the variable's name

    def __str__(self) -> str:
        return self.where or "built-in default"


DEFAULT_SOURCE = Source("default")


@dataclass(frozen=True)
class McpServerSetting:
    """One `mcpServers` entry with the file it came from (user and project servers stay apart)."""

    name: str
    config: Any
    source: Source

    @property
    def from_workspace(self) -> bool:
        return self.source.scope in WORKSPACE_SCOPES


@dataclass(frozen=True)
class LoadedSettings:
    """Settings plus the warnings met while loading, the files read and where each value came
    from."""

    settings: Settings
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    layers: tuple[SettingsLayer, ...] = ()
    sources: Mapping[str, Source] = field(default_factory=dict)  # dotted key -> origin
    mcp_servers: tuple[McpServerSetting, ...] = ()  # user ones, then the workspace's
    withheld: tuple[SettingKey, ...] = ()  # present in a file, not applied (untrusted)

    def source_of(self, dotted: str) -> Source:
        """Where the value at `dotted` (e.g. "compact.protected_turns") came from."""
        return self.sources.get(dotted, DEFAULT_SOURCE)


def user_settings_path(peri_home: Path) -> Path:
    return peri_home / SETTINGS_FILE


def project_settings_path(workspace: Path) -> Path:
    return workspace / PROJECT_DIR / SETTINGS_FILE


def local_settings_path(workspace: Path) -> Path:
    return workspace / PROJECT_DIR / LOCAL_SETTINGS_FILE


def load_settings(
    workspace: Path,
    peri_home: Path,
    env: Mapping[str, str],
    *,
    withhold: Collection[SettingKey] = (),
) -> LoadedSettings:
    """Read the settings files and merge them, leaving out the values named in `withhold`.

    Callers that act on the result in a workspace go through `permissions/trust.py`, which says
    what to withhold until the workspace is trusted.
    """
    layers, warnings = read_layers(workspace, peri_home)
    return merge_layers(layers, env, withhold=withhold, warnings=warnings)


def read_layers(
    workspace: Path, peri_home: Path, *, pre_read: PreRead | None = None
) -> tuple[list[SettingsLayer], list[str]]:
    """Every settings file that exists, lowest precedence first, plus the unknown-key warnings.
    `pre_read`: the files' text as the first frame read it (`first_look`), not read again."""
    warnings: list[str] = []
    layers: list[SettingsLayer] = []
    paths: list[tuple[Scope, Path]] = [
        ("user", user_settings_path(peri_home)),
        ("project", project_settings_path(workspace)),
        ("local", local_settings_path(workspace)),
    ]
    for scope, path in paths:
        raw = read_json_object(path, (pre_read or {}).get(path))
        if raw is None:
            continue
        known = drop_unknown(raw, Settings, path, "", warnings)
        _validate(known, path)  # types are checked per file so the error can name the file
        layers.append(SettingsLayer(scope, path, known))
    return layers, warnings


def merge_layers(
    layers: Collection[SettingsLayer],
    env: Mapping[str, str],
    *,
    withhold: Collection[SettingKey] = (),
    warnings: Collection[str] = (),
) -> LoadedSettings:
    """The layers merged (later wins key by key) with the environment on top."""
    held = set(withhold)
    merged: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    servers: dict[str, McpServerSetting] = {}
    withheld: list[SettingKey] = []
    for layer in layers:
        source = Source(layer.scope, str(layer.path))

        def skip(dotted: str, layer: SettingsLayer = layer) -> bool:
            key = (layer.path, dotted)
            if key in held:
                withheld.append(key)
                return True
            return False

        data = dict(layer.data)
        if layer.from_workspace:
            # A repository's servers never join the user's map: they start only when trusted.
            for name, config in (data.pop("mcpServers", None) or {}).items():
                if not skip(f"mcpServers.{name}"):
                    servers[f"workspace:{name}"] = McpServerSetting(name, config, source)
        _apply(merged, sources, data, Settings, source, "", skip)
    settings = _validate(merged, None)
    update = _env_overrides(env, sources)
    threshold = compact_threshold_from_env(env)
    if threshold is not None:
        update["compact"] = settings.compact.model_copy(
            update={"auto_compact_threshold": threshold}
        )
        sources["compact.auto_compact_threshold"] = Source("env", "COMPACT_THRESHOLD")
    user_servers = [
        McpServerSetting(name, config, sources.get(f"mcpServers.{name}", DEFAULT_SOURCE))
        for name, config in settings.mcpServers.items()
    ]
    return LoadedSettings(
        settings=settings.model_copy(update=update),
        warnings=list(warnings),
        files=[layer.path for layer in layers],
        layers=tuple(layers),
        sources=sources,
        mcp_servers=(*user_servers, *servers.values()),
        withheld=tuple(withheld),
    )


def _apply(  # noqa: PLR0917 - one recursive step with its context
    merged: dict[str, Any],
    sources: dict[str, Source],
    data: Mapping[str, Any],
    model: type[BaseModel],
    source: Source,
    prefix: str,
    skip: Callable[[str], bool],
) -> None:
    """`data` on top of `merged`: sections merge field by field, maps entry by entry (one entry,
    say one MCP server's config, is replaced whole), union lists add up, anything else replaces."""
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if skip(dotted):
            continue
        old = merged.get(key)
        section = section_type(model.model_fields[key].annotation)
        if section is not None and isinstance(value, dict):
            sub = dict(old) if isinstance(old, dict) else {}
            _apply(sub, sources, value, section, source, f"{dotted}.", skip)
            merged[key] = sub
        elif isinstance(value, dict):
            entries = dict(old) if isinstance(old, dict) else {}
            for name, entry in value.items():
                if not skip(f"{dotted}.{name}"):
                    entries[name] = entry
                    sources[f"{dotted}.{name}"] = source
            merged[key] = entries
        elif dotted in _UNION_KEYS and isinstance(value, list) and isinstance(old, list):
            merged[key] = list(dict.fromkeys([*old, *value]))
            sources[dotted] = source
        else:
            merged[key] = value
            sources[dotted] = source


def _validate(data: dict[str, Any], path: Path | None) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        problems = [describe(err) for err in e.errors()]
        where = f"{path}: " if path is not None else "settings: "
        raise SettingsError(where + "; ".join(problems)) from None


def _env_overrides(env: Mapping[str, str], sources: dict[str, Source]) -> dict[str, Any]:
    """Updates from the environment (their sources recorded); a bad value is a SettingsError
    naming the variable."""
    update = env_values(env)
    names = {
        "model": "PERI_MODEL",
        "provider": "PERI_PROVIDER",
        "context_window": "PERI_CONTEXT_WINDOW",
        "disable_compact": "DISABLE_COMPACT",
        "disable_auto_compact": "DISABLE_AUTO_COMPACT",
    }
    for key in update:
        sources[key] = Source("env", names[key])
    return update
