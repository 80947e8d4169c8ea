"""The hidden paths: what no tool hands over without asking, sandbox on or off, in every mode
(`bypass` too). They are the secrets every user has (`~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.netrc`)
and the `sandbox.filesystem.denyRead` paths, less what `allowRead` brings back: the same list the
sandbox hides from commands, so Read, Grep and Glob cannot reach what Bash cannot see.

A call that reads one, or searches inside one, asks (headless runs, which cannot ask, deny it);
a search of a wider folder leaves the hidden files out of its results, as a Read deny rule does.
Pure: paths are resolved, nothing is read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import DEFAULT_HIDDEN


@dataclass(frozen=True)
class HiddenPaths:
    """The hidden paths of one session, resolved."""

    paths: tuple[Path, ...] = ()
    revealed: tuple[Path, ...] = ()  # `allowRead`: under a hidden path, yet readable

    def covering(self, path: Path) -> Path | None:
        """The hidden path `path` is (or is inside) as written or as it resolves; None."""
        for candidate in _forms(path):
            if any(_within(candidate, r) for r in self.revealed):
                return None
            for hidden in self.paths:
                if _within(candidate, hidden):
                    return hidden
        return None

    def first_read(self, paths: Iterable[Path]) -> tuple[Path, Path] | None:
        """The first of `paths` that a hidden path covers, with that hidden path."""
        for path in paths:
            hidden = self.covering(path)
            if hidden is not None:
                return path, hidden
        return None


def hidden_paths(settings: SandboxSettings, *, home: Path, workspace: Path) -> HiddenPaths:
    """The hidden paths `settings` name (their `sandbox.filesystem`), with the default ones,
    under `home` and under this process's home (where a model's `~` leads the tools)."""
    fs = settings.filesystem
    homes = tuple(dict.fromkeys([home, Path.home()]))

    def resolved(values: Iterable[str]) -> tuple[Path, ...]:
        return tuple(dict.fromkeys(_resolve(v, h, workspace) for v in values for h in homes))

    return HiddenPaths(resolved([*DEFAULT_HIDDEN, *fs.denyRead]), resolved(fs.allowRead))


def _resolve(value: str, home: Path, workspace: Path) -> Path:
    path = home / value[2:] if value == "~" or value.startswith("~/") else Path(value)
    if not path.is_absolute():
        path = workspace / path
    return Path(os.path.realpath(path))


def _forms(path: Path) -> list[Path]:
    """`path` as written (made absolute, `..` folded) and as it resolves."""
    written = Path(os.path.normpath(path.expanduser().absolute()))
    try:
        real = Path(os.path.realpath(written))
    except (OSError, ValueError):
        return [written]
    return [written] if real == written else [written, real]


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
