"""Where a session lives: the workspace its header names, found by its id alone (a face that is
handed an id, `peri mcp serve`'s `peri_reply`, learns which folder the session belongs to)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from peri_cli.base.first_look import peri_home_from_env
from peri_cli.base.ids import is_session_id

HEADER_CAP = 1 << 20  # bytes of the first line read: a header is small; a huge line is not one


def session_workspace(session_id: str, env: Mapping[str, str]) -> Path | None:
    """The workspace of the session with exactly this id under PERI_HOME, or None (no such
    session, an id that is not shaped like one, or an unreadable header)."""
    if not is_session_id(session_id) or len(session_id) != 36:
        return None
    projects = peri_home_from_env(env) / "projects"
    try:
        folders = sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        return None
    for folder in folders:
        path = folder / f"{session_id}.jsonl"
        if path.is_file():
            return _header_workspace(path)
    return None


def _header_workspace(path: Path) -> Path | None:
    try:
        with path.open("rb") as f:
            line = f.readline(HEADER_CAP)
        header = json.loads(line)
    except (OSError, ValueError):
        return None
    workspace = header.get("workspace") if isinstance(header, dict) else None
    if header.get("type") != "header" or not isinstance(workspace, str) or not workspace:
        return None
    return Path(workspace)
