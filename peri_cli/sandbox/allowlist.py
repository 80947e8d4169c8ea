"""Adding a domain to `sandbox.network.allowedDomains` in a settings file (the proxy's "always").

The edit is rulefile.py's: the user's other keys stay, the file is replaced atomically under a
lock on its folder, and a file that is not a JSON object (or not a regular file) is left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peri_cli.permissions.rulefile import (
    LOCAL_SETTINGS_FILE,
    RuleFileError,
    edit_settings_file,
    ensure_git_ignored,
)


class AllowlistError(Exception):
    """The domain could not be saved; one line for the user, the file left as it was."""


def add_allowed_domain(settings: Path, domain: str) -> None:
    """Append `domain` to `sandbox.network.allowedDomains` of `settings`, creating the file
    (and its folder); a domain already listed is not added twice."""
    folder = settings.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AllowlistError(f"{folder}: cannot create ({e.strerror or e})") from e

    def append(data: dict[str, Any]) -> None:
        listed = _domains(data, settings)
        if domain not in listed:
            listed.append(domain)

    try:
        edit_settings_file(settings, append)
    except RuleFileError as e:
        raise AllowlistError(str(e)) from e
    if settings.name == LOCAL_SETTINGS_FILE:
        ensure_git_ignored(folder)  # the personal file stays out of the repository


def _domains(data: dict[str, Any], path: Path) -> list[Any]:
    node: Any = data
    for key in ("sandbox", "network"):
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise RuleFileError(f"{path}: {key} is not an object; not changed")
    listed = node.setdefault("allowedDomains", [])
    if not isinstance(listed, list):
        raise RuleFileError(f"{path}: sandbox.network.allowedDomains is not a list; not changed")
    return listed
