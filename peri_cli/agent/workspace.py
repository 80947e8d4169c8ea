"""A workspace's settings and guides as far as its trust allows.

The settings files are read once; they are merged with or without what the repository's own
files would loosen (`permissions/trust.py` says what that is), and the guide discovery keeps a
project file's paths inside the workspace until it is trusted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from peri_cli.base.claude_settings import add_claude_layers
from peri_cli.base.first_look import PreRead
from peri_cli.base.settings import (
    WORKSPACE_SCOPES,
    LoadedSettings,
    Scope,
    SettingKey,
    Settings,
    SettingsLayer,
    merge_layers,
    read_layers,
)
from peri_cli.context.guides import GuideResult, discover_guides
from peri_cli.extensions.hooks import hook_loosenings
from peri_cli.permissions.loosenings import DETECTORS, find_loosenings, guide_loosenings
from peri_cli.permissions.rule_sources import allow_rule_loosenings
from peri_cli.permissions.trust import (
    Loosening,
    TrustState,
    WorkspaceFiles,
    assess,
    withheld_settings,
)
from peri_cli.permissions.truststore import TrustStore

# What a repository's settings files would loosen: modes and MCP servers (the detectors of
# permissions/loosenings.py), allow rules and hooks (their own modules, which import trust: so
# they are joined here).
ALL_DETECTORS = (*DETECTORS, allow_rule_loosenings, hook_loosenings)


def load_workspace(
    workspace: Path,
    peri_home: Path,
    env: Mapping[str, str],
    *,
    home: Path,
    mode_flag: str | None = None,
    trust_flag: bool = False,
    interactive: bool = False,
    extra: Sequence[Loosening] = (),
    sources: Collection[Scope] | None = None,
    extra_layers: Sequence[SettingsLayer] = (),
    pre_read: PreRead | None = None,
) -> tuple[LoadedSettings, TrustState]:
    """Read the settings, find what the workspace's files would loosen (plus `extra`, found
    elsewhere: skills' allowed-tools, .mcp.json servers), decide trust, and merge the settings
    accordingly. SettingsError for a bad settings file. `sources`: which files are read (None:
    all); `extra_layers`: settings given by a program, read after the user's file; `pre_read`:
    the settings files' text as the first frame read it."""
    layers, warnings = read_layers(workspace, peri_home, pre_read=pre_read)
    # Claude Code's files, each below Peri's of its scope (same trust, same `sources`)
    layers, warnings = add_claude_layers(layers, warnings, workspace, home, env, scopes=sources)
    if sources is not None:
        layers = [layer for layer in layers if layer.scope in sources]
    layers[:0] = extra_layers
    files = WorkspaceFiles(workspace, tuple(layers), mode_flag)
    found = [*find_loosenings(files, ALL_DETECTORS), *extra]
    untrusted = merge_layers(layers, env, withhold=_withheld(layers), warnings=warnings)
    record, store_warning = TrustStore(peri_home).lookup(workspace)
    probe = None
    if not trust_flag and not (record is not None and record.trusted):
        # Only an untrusted workspace needs to know what its guides would pull in from outside.
        probe = workspace_guides(workspace, home, untrusted, trusted=False)
        found += guide_loosenings(probe.outside, _label(untrusted, workspace))
    state = assess(workspace, found, record=record, flag=trust_flag, interactive=interactive)
    state.guides = probe  # the untrusted session's guides: not read again for its snapshot
    if store_warning:
        state.warnings.append(store_warning)
    return (settle(untrusted, env, trusted=True) if state.trusted else untrusted), state


def settle(loaded: LoadedSettings, env: Mapping[str, str], *, trusted: bool) -> LoadedSettings:
    """The same files merged again, with what the workspace would loosen applied or not."""
    withhold = [] if trusted else _withheld(loaded.layers)
    return merge_layers(loaded.layers, env, withhold=withhold, warnings=loaded.warnings)


def workspace_guides(
    workspace: Path, home: Path, settings: LoadedSettings | Settings, *, trusted: bool
) -> GuideResult:
    """The project guide; `guides.extra_paths` from a project file stay inside the workspace
    unless it is trusted."""
    resolved = settings.settings if isinstance(settings, LoadedSettings) else settings
    paths = [Path(p) for p in resolved.guides.extra_paths]
    from_workspace = (
        isinstance(settings, LoadedSettings)
        and settings.source_of("guides.extra_paths").scope in WORKSPACE_SCOPES
    )
    return discover_guides(
        workspace,
        home=home,
        extra_paths=[] if from_workspace else paths,
        project_paths=paths if from_workspace else [],
        budget_bytes=resolved.guides.budget_bytes,
        allow_outside=trusted,
    )


def _withheld(layers: Sequence[SettingsLayer]) -> list[SettingKey]:
    # Judged without the command line's mode, so the merged settings never hold a loosened value.
    files = WorkspaceFiles(Path("."), tuple(layers))
    return withheld_settings(find_loosenings(files, ALL_DETECTORS))


def _label(loaded: LoadedSettings, workspace: Path) -> str:
    where = Path(loaded.source_of("guides.extra_paths").where or ".")
    try:
        return where.relative_to(workspace).as_posix()
    except ValueError:
        return str(where)
