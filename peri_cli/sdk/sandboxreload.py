"""The `sandbox` settings read again mid-session: a settings file edited by hand (or by
`/sandbox`) changes what the next sandboxed command may touch, without a restart.

Checked as each sandboxed command starts, by the files' sizes and modification times (three
`stat` calls), so an unchanged session reads nothing."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from peri_cli.base.settings import (
    LoadedSettings,
    Scope,
    SettingsLayer,
    local_settings_path,
    project_settings_path,
    read_layers,
    user_settings_path,
)

Stamp = tuple[tuple[str, int, int], ...]
ALL_SCOPES: tuple[Scope, ...] = ("user", "project", "local")


def watched(
    sources: Collection[Scope] | None, workspace: Path, peri_home: Path
) -> dict[Scope, Path]:
    """The settings files of the layers this session reads (`sources`; None: every layer),
    whether they exist yet or not: a file made mid-session counts as a change too."""
    paths: dict[Scope, Path] = {
        "user": user_settings_path(peri_home),
        "project": project_settings_path(workspace),
        "local": local_settings_path(workspace),
    }
    return {scope: path for scope, path in paths.items() if sources is None or scope in sources}


def stamp(paths: Iterable[Path]) -> Stamp:
    out: list[tuple[str, int, int]] = []
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            out.append((str(path), -1, -1))
            continue
        out.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(out)


def reread(
    loaded: LoadedSettings | None, files: dict[Scope, Path], workspace: Path, peri_home: Path
) -> list[SettingsLayer]:
    """The layers again: the watched files as they are now, and the layers that are not files
    (a program's `PeriOptions.sandbox`) as they were. SettingsError for a file gone wrong."""
    fresh, _ = read_layers(workspace, peri_home)
    # Claude Code's files are kept as read at start (they are not watched), as are the layers
    # that are not files.
    kept = [layer for layer in (loaded.layers if loaded else ()) if _rank(layer) != 1]
    layers = [*(layer for layer in fresh if files.get(layer.scope) == layer.path), *kept]
    # lowest first, as read at start: in a scope Claude Code's file, Peri's, a program's object
    return sorted(layers, key=lambda layer: (ALL_SCOPES.index(layer.scope), _rank(layer)))


def _rank(layer: SettingsLayer) -> int:
    if layer.claude_code:
        return 0
    return 2 if str(layer.path).startswith("<") else 1
