"""The `sandbox` settings object (CONTRACT.md §10, Claude Code's names) and how the files' copies
of it combine: lists add up across files, later files win for switches, and a workspace file
that is not trusted may only make the sandbox stricter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from peri_cli.base.settings_check import SettingsError, describe


class _Section(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


class SandboxFilesystem(_Section):
    allowWrite: list[str] = Field(default_factory=list)
    denyWrite: list[str] = Field(default_factory=list)
    denyRead: list[str] = Field(default_factory=list)
    allowRead: list[str] = Field(default_factory=list)


class SandboxNetwork(_Section):
    allowedDomains: list[str] = Field(default_factory=list)
    allowLocalBinding: bool = False
    allowUnixSockets: list[str] = Field(default_factory=list)
    allowAllUnixSockets: bool = False


class SandboxSettings(_Section):
    enabled: bool = False
    autoAllowBashIfSandboxed: bool = True
    excludedCommands: list[str] = Field(default_factory=list)
    allowUnsandboxedCommands: bool = True
    failIfUnavailable: bool = False
    filesystem: SandboxFilesystem = Field(default_factory=SandboxFilesystem)
    network: SandboxNetwork = Field(default_factory=SandboxNetwork)


# For a file that is not trusted: the value each switch may take (the stricter one), and the
# lists it may add to (denials). Everything else it says is ignored with a warning.
_STRICT_SWITCHES: Mapping[str, bool] = {
    "enabled": True,
    "autoAllowBashIfSandboxed": False,
    "allowUnsandboxedCommands": False,
    "failIfUnavailable": True,
    "network.allowLocalBinding": False,
    "network.allowAllUnixSockets": False,
}
_NARROWING_LISTS = frozenset({"filesystem.denyWrite", "filesystem.denyRead"})


def sandbox_from_mapping(data: Mapping[str, Any], where: str) -> SandboxSettings:
    """A `sandbox` object given as data (`PeriOptions.sandbox`); SettingsError naming the key."""
    try:
        return SandboxSettings.model_validate(dict(data))
    except ValidationError as e:
        problems = "; ".join(describe(err) for err in e.errors())
        raise SettingsError(f"{where}: sandbox.{problems}") from None


def merge_sandbox(
    layers: Iterable[tuple[Path, bool, Mapping[str, Any]]],
) -> tuple[SandboxSettings, list[str]]:
    """The layers' `sandbox` objects, lowest first, each given as (file, trusted, object), merged;
    plus a warning for each thing an untrusted file said that would loosen the sandbox."""
    merged: dict[str, Any] = {}
    warnings: list[str] = []
    for path, trusted, data in layers:
        for dotted, value in flatten(data):
            if trusted or narrows(dotted, value):
                _put(merged, dotted, value)
            else:
                warnings.append(
                    f"{path}: sandbox.{dotted} ignored: the workspace is not trusted, and its "
                    "files may only make the sandbox stricter"
                )
    try:
        return SandboxSettings.model_validate(_nest(merged)), warnings
    except ValidationError as e:  # each file was checked already; this is only a safety net
        raise SettingsError("sandbox: " + "; ".join(describe(x) for x in e.errors())) from None


def narrows(dotted: str, value: Any) -> bool:
    """Whether an untrusted file may set `dotted` (under `sandbox`) to `value`: it narrows."""
    if dotted in _STRICT_SWITCHES:
        return value is _STRICT_SWITCHES[dotted]
    return dotted in _NARROWING_LISTS


def flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, Mapping) and key in ("filesystem", "network") and not prefix:
            out.extend(flatten(value, f"{key}."))
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _put(merged: dict[str, Any], dotted: str, value: Any) -> None:
    """Lists add up (no file takes back another's entry); anything else: the later file wins."""
    old = merged.get(dotted)
    if isinstance(value, list) and isinstance(old, list):
        merged[dotted] = list(dict.fromkeys([*old, *value]))
    else:
        merged[dotted] = list(value) if isinstance(value, list) else value


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dotted, value in flat.items():
        head, _, tail = dotted.partition(".")
        if tail:
            out.setdefault(head, {})[tail] = value
        else:
            out[head] = value
    return out
