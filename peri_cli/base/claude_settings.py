"""Claude Code's settings files as layers of Peri's: `~/.claude/settings.json` (user),
`.claude/settings.json` and `.claude/settings.local.json` (project, local), each read just below
Peri's own file of the same scope. They take that scope, so workspace trust treats the two
project ones as it treats `.peri/` (`permissions/trust.py`): they loosen nothing until trusted.

Only what Peri shares with Claude Code's shape is read: `model` (through `claude_model`, and
only with the Anthropic provider: `model_for`), `permissions` (its rules, and `defaultMode`
mapped to Peri's mode), `hooks`, `sandbox`, `statusLine` and `outputStyle` (and the plugins'
keys). Every other key or sub-key is ignored without a warning: the file is Claude Code's, and
its own keys are no mistake. A wrong type drops that key with one warning naming the file; a
file that cannot be read (bad JSON, too large, a FIFO, a directory, a project file that leads out
of the workspace) is a warning and Peri starts.
`claudeCodeSettings: false` in the user's own Peri settings, or PERI_CLAUDE_CODE_SETTINGS=0,
turns all this off; a project file cannot (it could drop the user's Claude Code deny rules).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peri_cli.base.first_look import LOCAL_SETTINGS_FILE, MAX_SETTINGS_BYTES, SETTINGS_FILE
from peri_cli.base.model_alias import ALIASES
from peri_cli.base.safe_read import SafeReadError, read_text, resolved
from peri_cli.base.settings import LoadedSettings, Scope, Settings, SettingsLayer, Source
from peri_cli.base.settings_check import (
    SettingsError,
    describe,
    drop_unknown,
    read_json_object,
    show,
)
from peri_cli.base.textsafe import visible

CLAUDE_DIR = ".claude"
SWITCH_KEY = "claudeCodeSettings"
SWITCH_ENV = "PERI_CLAUDE_CODE_SETTINGS"
_OFF = frozenset({"0", "false", "no", "off"})
_ON = frozenset({"1", "true", "yes", "on"})

# `permissions.defaultMode` -> Peri's mode. `dontAsk` denies whatever would ask: Peri's
# `default` is the closest (it denies so wherever no one can answer, as `-p` does; the TUI asks).
MODES: Mapping[str, str] = {
    "default": "default",
    "acceptEdits": "accept-edits",
    "plan": "plan",
    "bypassPermissions": "bypass",
    "dontAsk": "default",
}
RULE_KEYS = ("allow", "ask", "deny")
# Keys read as they are written, Peri's shape being Claude Code's.
SHARED_KEYS = (
    "hooks",
    "sandbox",
    "enabledPlugins",
    "extraKnownMarketplaces",
    "statusLine",
    "outputStyle",
)
_SCOPE_ORDER: Mapping[str, int] = {"user": 0, "project": 1, "local": 2}

# Claude Code's model aliases (and its `[1m]` suffix): names no provider knows as such.
_ALIAS = re.compile(r"(default|best|sonnet|opus|haiku|opusplan)", re.IGNORECASE)


def claude_model(value: str) -> str | None:
    """A model named in a Claude Code file (it applies with the Anthropic provider only,
    `model_for`): an alias (`sonnet`, `opus[1m]`) is that family's current model; a full model
    id is kept; `default`, `best`, `opusplan` and other `[...]` names are dropped, so the next
    setting below it (or the provider's default) applies."""
    name = value.strip()
    family = name.lower().removesuffix("[1m]")
    if family in ALIASES:
        return ALIASES[family]
    if not name or name.endswith("]") or _ALIAS.fullmatch(name):
        return None
    return name


def claude_paths(workspace: Path, home: Path) -> list[tuple[Scope, Path]]:
    """Claude Code's settings files, lowest precedence first."""
    return [
        ("user", home / CLAUDE_DIR / SETTINGS_FILE),
        ("project", workspace / CLAUDE_DIR / SETTINGS_FILE),
        ("local", workspace / CLAUDE_DIR / LOCAL_SETTINGS_FILE),
    ]


def add_claude_layers(
    layers: Sequence[SettingsLayer],
    warnings: Sequence[str],
    workspace: Path,
    home: Path,
    env: Mapping[str, str],
    *,
    scopes: Collection[Scope] | None = None,
) -> tuple[list[SettingsLayer], list[str]]:
    """Peri's layers as `read_layers` gave them with Claude Code's files among them, each just
    below Peri's file of its scope, and `claudeCodeSettings` taken out of Peri's project files
    (with a warning). `scopes`: the levels read (None: all). SettingsError for a bad
    PERI_CLAUDE_CODE_SETTINGS."""
    out = list(warnings)
    kept = [_without_switch(layer, out) for layer in layers]
    if not claude_code_enabled(kept, env):
        return kept, out
    seen: set[Path] = set()
    for scope, path in claude_paths(workspace, home):
        if scopes is not None and scope not in scopes:
            continue
        real = resolved(path)
        if real in seen:  # Peri started in the home folder: that file is the user's, once
            continue
        seen.add(real)
        layer = read_claude_file(scope, path, None if scope == "user" else workspace, out)
        if layer is not None:
            kept.append(layer)
    kept.sort(key=lambda layer: (_SCOPE_ORDER[layer.scope], not layer.claude_code))
    return kept, out


def claude_code_enabled(layers: Sequence[SettingsLayer], env: Mapping[str, str]) -> bool:
    """PERI_CLAUDE_CODE_SETTINGS, else the user's own `claudeCodeSettings`, else on."""
    raw = env.get(SWITCH_ENV, "").strip().lower()
    if raw in _OFF:
        return False
    if raw in _ON:
        return True
    if raw:
        raise SettingsError(f"{SWITCH_ENV}: expected 0 or 1, got {show(raw)}")
    for layer in layers:
        if layer.scope == "user" and not layer.claude_code and SWITCH_KEY in layer.data:
            return bool(layer.data[SWITCH_KEY])
    return True


def _without_switch(layer: SettingsLayer, warnings: list[str]) -> SettingsLayer:
    if layer.scope == "user" or SWITCH_KEY not in layer.data:
        return layer
    warnings.append(
        visible(
            f"{layer.path}: {SWITCH_KEY} is read only from your user settings and "
            f"{SWITCH_ENV}; ignored"
        )
    )
    data = {k: v for k, v in layer.data.items() if k != SWITCH_KEY}
    return replace(layer, data=data)


def read_claude_file(
    scope: Scope, path: Path, inside: Path | None, warnings: list[str]
) -> SettingsLayer | None:
    """One Claude Code file as a layer; None when it is missing or cannot be read (then with
    a warning). `inside`: the folder a project file must stay in after symlinks."""
    read: str | SafeReadError
    try:
        read = read_text(path, max_bytes=MAX_SETTINGS_BYTES, inside=inside)
    except SafeReadError as e:
        read = e
    try:
        raw = read_json_object(path, read)
    except SettingsError as e:
        message = str(e)
        warnings.append(
            visible(message if message.endswith("not read") else f"{message}; not read")
        )
        return None
    if raw is None:
        return None
    return SettingsLayer(scope, path, translate(raw, path, warnings), claude_code=True)


def translate(raw: Mapping[str, Any], path: Path, warnings: list[str]) -> dict[str, Any]:
    """A Claude Code file's object in Peri's keys, checked (see the module's docstring)."""
    data: dict[str, Any] = {}
    if "model" in raw:
        value = raw["model"]
        model = claude_model(value) if isinstance(value, str) else value  # (a bad type: below)
        if model is not None:
            data["model"] = model
    permissions = raw.get("permissions")
    if isinstance(permissions, dict):
        rules = {key: permissions[key] for key in RULE_KEYS if key in permissions}
        if rules:
            data["permissions"] = rules
        if "defaultMode" in permissions:
            _mode(permissions["defaultMode"], path, data, warnings)
    elif permissions is not None:
        data["permissions"] = permissions  # the check below reports it
    data.update((key, raw[key]) for key in SHARED_KEYS if key in raw)
    return _checked(drop_unknown(data, Settings, path, "", []), path, warnings)


def _mode(value: Any, path: Path, data: dict[str, Any], warnings: list[str]) -> None:
    mode = MODES.get(value) if isinstance(value, str) else None
    if mode is not None:
        data["permission_mode"] = mode
        return
    known = ", ".join(MODES)
    warnings.append(
        visible(f"{path}: permissions.defaultMode: expected one of {known}, got {show(value)}")
        + "; ignored"
    )


_MAX_PASSES = 8  # each pass drops every key it found wrong; nesting is shallow


def _checked(data: dict[str, Any], path: Path, warnings: list[str]) -> dict[str, Any]:
    """`data` without the keys of a wrong type, one warning each."""
    for _ in range(_MAX_PASSES):
        try:
            Settings.model_validate(data)
        except ValidationError as e:
            for err in e.errors():
                warnings.append(visible(f"{path}: {describe(err)}") + "; ignored")
                _drop(data, err["loc"])
            continue
        return data
    return {}


def _drop(data: dict[str, Any], loc: Sequence[Any]) -> None:
    """Remove the value at `loc`, or the innermost object key on the way to it."""
    node = data
    for n, part in enumerate(loc):
        if not isinstance(part, str) or part not in node:
            break
        if n == len(loc) - 1 or not isinstance(node[part], dict):
            del node[part]
            return
        node = node[part]
    if loc and loc[0] in data:
        del data[loc[0]]


def model_for(loaded: LoadedSettings, provider: str) -> str | None:
    """The configured model for `provider`: a Claude Code file's `model` names a Claude model,
    so with another provider the next file below it that names one counts instead."""
    model = loaded.settings.model
    if provider == "anthropic" or not from_claude_code(loaded, loaded.source_of("model")):
        return model
    for layer in reversed(loaded.layers):
        value = layer.data.get("model")
        if not layer.claude_code and isinstance(value, str):
            return value
    return None


def from_claude_code(loaded: LoadedSettings, source: Source) -> bool:
    """Whether `source` is one of Claude Code's files."""
    return any(layer.claude_code and str(layer.path) == source.where for layer in loaded.layers)
