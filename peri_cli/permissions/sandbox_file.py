"""Saving `/sandbox`'s switches to the workspace's `.peri/settings.local.json` (the personal,
git-ignored file), under the same lock and atomic write as the approval's rules."""

from __future__ import annotations

import json
from pathlib import Path

from peri_cli.base.settings import LOCAL_SETTINGS_FILE
from peri_cli.permissions.rulefile import (
    RuleFileError,
    _locked,
    _project_folder,
    _read_object,
    _write_atomically,
    ensure_git_ignored,
)

# `/sandbox <name> on|off` -> the key under `sandbox`
SWITCHES = {"auto": "autoAllowBashIfSandboxed", "fallback": "allowUnsandboxedCommands"}


def write_switch(workspace: Path, key: str, value: bool) -> Path:
    """Set `sandbox.<key>` in `.peri/settings.local.json`; return the file's path."""
    folder = _project_folder(workspace)
    path = folder / LOCAL_SETTINGS_FILE
    with _locked(folder):
        data = _read_object(path)
        section = data.setdefault("sandbox", {})
        if not isinstance(section, dict):
            raise RuleFileError(f"{path}: sandbox is not an object; not changed")
        section[key] = value
        _write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    ensure_git_ignored(folder)
    return path
