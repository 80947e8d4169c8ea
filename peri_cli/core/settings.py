"""Settings: `$PERI_HOME/settings.json` (user), `.peri/settings.json` (project) and environment.

Precedence, lowest first: built-in defaults, the user file, the project file (key by key, nested
objects too), then the environment. Command-line flags beat all of these; the CLI applies them.
Unknown keys warn; a wrong type is a SettingsError naming the file and the dotted key.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

SETTINGS_FILE = "settings.json"
PROJECT_DIR = ".peri"

Provider = Literal["anthropic", "openai"]
PermissionMode = Literal["default", "accept-edits", "plan", "bypass"]


class SettingsError(Exception):
    """A settings file or variable that cannot be used; the message is one line for the user."""


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
    mcpServers: dict[str, Any] = Field(default_factory=dict)  # the key as written in the file
    context_window: int | None = Field(default=None, gt=0)
    disable_compact: bool = False
    disable_auto_compact: bool = False


@dataclass(frozen=True)
class LoadedSettings:
    """Settings plus the warnings met while loading and the files that were read."""

    settings: Settings
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def peri_home_from_env(env: Mapping[str, str]) -> Path:
    """`$PERI_HOME`, or `~/.peri` when unset or empty."""
    value = env.get("PERI_HOME", "")
    return Path(value).expanduser() if value else Path.home() / ".peri"


def user_settings_path(peri_home: Path) -> Path:
    return peri_home / SETTINGS_FILE


def project_settings_path(workspace: Path) -> Path:
    return workspace / PROJECT_DIR / SETTINGS_FILE


def load_settings(workspace: Path, peri_home: Path, env: Mapping[str, str]) -> LoadedSettings:
    """Read both settings files, merge them (project wins key by key) and apply the environment."""
    warnings: list[str] = []
    files: list[Path] = []
    merged: dict[str, Any] = {}
    for path in (user_settings_path(peri_home), project_settings_path(workspace)):
        raw = _read_json_object(path)
        if raw is None:
            continue
        files.append(path)
        known = _drop_unknown(raw, Settings, path, "", warnings)
        _validate(known, path)  # types are checked per file so the error can name the file
        merged = _merge(merged, known, Settings)
    settings = _validate(merged, None)
    update = _env_overrides(env)
    threshold = compact_threshold_from_env(env)
    if threshold is not None:
        update["compact"] = settings.compact.model_copy(
            update={"auto_compact_threshold": threshold}
        )
    return LoadedSettings(settings.model_copy(update=update), warnings, files)


def _read_json_object(path: Path) -> dict[str, Any] | None:
    """The file's top-level object, None when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError as e:
        raise SettingsError(f"{path}: is a directory, not a file") from e
    except PermissionError as e:
        raise SettingsError(f"{path}: permission denied") from e
    except UnicodeDecodeError as e:
        raise SettingsError(f"{path}: not valid UTF-8") from e
    except OSError as e:
        raise SettingsError(f"{path}: cannot read ({e.strerror or e})") from e
    # An empty file (e.g. just `touch`ed) means "no settings", not a syntax error.
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SettingsError(
            f"{path}: invalid JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from e
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: expected a JSON object at the top level, got {_kind(data)}")
    return data


def _drop_unknown(
    raw: dict[str, Any], model: type[BaseModel], path: Path, prefix: str, warnings: list[str]
) -> dict[str, Any]:
    """`raw` without the keys `model` does not know (each warned about), recursing into sections."""
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        dotted = f"{prefix}{key}"
        info = model.model_fields.get(key)
        if info is None:
            warnings.append(f"{path}: unknown key {dotted}; ignored")
            continue
        section = _section_type(info.annotation)
        if section is not None and isinstance(value, dict):
            kept[key] = _drop_unknown(value, section, path, f"{dotted}.", warnings)
        else:
            kept[key] = value
    return kept


def _merge(base: dict[str, Any], over: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """`over` on top of `base`: sections merge recursively, map-valued keys merge one level deep."""
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            section = _section_type(model.model_fields[key].annotation)
            # A section merges field by field; a map (meta_harness, mcpServers) entry by entry,
            # and one entry (say one MCP server's config) is replaced whole.
            merged[key] = _merge(old, value, section) if section else {**old, **value}
        else:
            merged[key] = value
    return merged


def _section_type(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _validate(data: dict[str, Any], path: Path | None) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        problems = [_describe(err) for err in e.errors()]
        where = f"{path}: " if path is not None else "settings: "
        raise SettingsError(where + "; ".join(problems)) from None


def _describe(err: Any) -> str:
    """One pydantic error as `dotted.key: expected ..., got ...`."""
    loc = ""
    for part in err["loc"]:
        loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
    kind: str = err["type"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    expected = {
        "int_type": "expected an integer",
        "float_type": "expected a number",
        "bool_type": "expected true or false",
        "string_type": "expected a string",
        "list_type": "expected a list",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "model_attributes_type": "expected an object",
        "literal_error": f"expected {ctx.get('expected', 'one of the allowed values')}",
        "greater_than": f"must be greater than {ctx.get('gt')}",
        "greater_than_equal": f"must be at least {ctx.get('ge')}",
        "less_than": f"must be less than {ctx.get('lt')}",
        "less_than_equal": f"must be at most {ctx.get('le')}",
        "finite_number": "expected a finite number",
    }.get(kind)
    if expected is None:
        msg: str = err["msg"]
        expected = msg[:1].lower() + msg[1:]
    return f"{loc or '(top level)'}: {expected}, got {_show(err.get('input'))}"


def _show(value: Any) -> str:
    """A short rendering of a bad value; long ones are described, not echoed (they may be keys)."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    if len(shown) <= 32:
        return shown
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    return _kind(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__


def _env_flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() not in ("", "0", "false")


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    """Updates from the environment; a bad value is a SettingsError naming the variable."""
    update: dict[str, Any] = {}
    if model := env.get("PERI_MODEL", "").strip():
        update["model"] = model
    if provider := env.get("PERI_PROVIDER", "").strip():
        if provider not in ("anthropic", "openai"):
            raise SettingsError(
                f"PERI_PROVIDER: expected 'anthropic' or 'openai', got {_show(provider)}"
            )
        update["provider"] = provider
    if window := env.get("PERI_CONTEXT_WINDOW", "").strip():
        try:
            tokens = int(window)
        except ValueError:
            tokens = 0
        if tokens <= 0:
            raise SettingsError(
                f"PERI_CONTEXT_WINDOW: expected a positive number of tokens, got {_show(window)}"
            )
        update["context_window"] = tokens
    if _env_flag(env, "DISABLE_COMPACT"):
        update["disable_compact"] = True
    if _env_flag(env, "DISABLE_AUTO_COMPACT"):
        update["disable_auto_compact"] = True
    return update


def compact_threshold_from_env(env: Mapping[str, str]) -> float | None:
    """`COMPACT_THRESHOLD` as a fraction in 0.0..1.0, None when unset; anything else is an error."""
    raw = env.get("COMPACT_THRESHOLD", "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:  # also rejects nan
        raise SettingsError(
            f"COMPACT_THRESHOLD: expected a number from 0.0 to 1.0, got {_show(raw)}"
        )
    return value
