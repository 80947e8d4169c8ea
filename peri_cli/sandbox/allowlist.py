"""Adding a domain to `sandbox.network.allowedDomains` in a settings file (the proxy's "always"),
in the layer the user picked: the workspace's local or shared settings, or the user's.

The edit is rulefile.py's: the user's other keys stay, the file is replaced atomically under a
lock on its folder (so two "always" answers at once both land), and a file that is not a JSON
object (or not a regular file) is left alone. The proxy reads the list back next session through
the settings layers (`base/settings_sandbox.py`), as it reads what the user wrote by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peri_cli.base.settings import (
    LOCAL_SETTINGS_FILE,
    local_settings_path,
    project_settings_path,
    user_settings_path,
)
from peri_cli.permissions.hosts import canonical_host, is_host_name
from peri_cli.permissions.rulefile import (
    RuleFileError,
    _project_folder,
    edit_settings_file,
    ensure_git_ignored,
)
from peri_cli.sandbox.gate import Scope

# What each scope is called where the user picks it and where a record says it was saved.
SCOPE_FILES: dict[Scope, str] = {
    "local": ".peri/settings.local.json",
    "project": ".peri/settings.json",
    "user": "user settings (PERI_HOME/settings.json)",
}


class AllowlistError(Exception):
    """The domain could not be saved; one line for the user, the file left as it was."""


def settings_file(scope: Scope, workspace: Path, peri_home: Path) -> Path:
    """The settings file of `scope`; the workspace's `.peri` is checked (not a link, not out of
    the workspace) and created first."""
    if scope == "user":
        try:
            peri_home.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise AllowlistError(f"{peri_home}: cannot create ({e.strerror or e})") from e
        return user_settings_path(peri_home)
    try:
        _project_folder(workspace)
    except RuleFileError as e:
        raise AllowlistError(str(e)) from e
    if scope == "project":
        return project_settings_path(workspace)
    return local_settings_path(workspace)


def keep_domain(scope: Scope, workspace: Path, peri_home: Path, domain: str) -> Path:
    """Add `domain` to the allowed domains of `scope`'s settings file; the file's path."""
    path = settings_file(scope, workspace, peri_home)
    add_allowed_domain(path, domain)
    return path


def add_allowed_domain(settings: Path, domain: str) -> None:
    """Append `domain` (in its canonical form) to `sandbox.network.allowedDomains` of
    `settings`, creating the file (and its folder); a domain already listed is not added twice.
    A name that is not one host (control characters, a glob, too long) is refused."""
    name = canonical_host(domain)
    if not is_host_name(name):
        raise AllowlistError(f"{domain[:80]!r} is not a host name; not saved")
    folder = settings.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AllowlistError(f"{folder}: cannot create ({e.strerror or e})") from e

    def append(data: dict[str, Any]) -> None:
        listed = _domains(data, settings)
        if name not in listed:
            listed.append(name)

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
