"""Permission modes and decisions, in one place (CONTRACT.md §6), and the protected paths.

Protected paths hold what configures Peri and the repository itself (settings, skills, agents,
MCP servers, git hooks): a write there could switch the next run to `bypass` or run code, so it is
never done without asking, except in `bypass`. `protected_path` is the one list every writer
checks (tools here; permission rules, hooks and shell redirections later).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from peri_cli.base.modes import MODES, Mode
from peri_cli.base.tool import ToolKind

__all__ = [
    "MODES",
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "Decision",
    "Mode",
    "decide",
    "protected_path",
]

# Folders and files, at any depth under the workspace (any folder can be opened as a workspace of
# its own, and a nested repository's `.git/hooks` runs code), compared without case (macOS).
PROTECTED_DIRS = (".git", ".peri", ".claude", ".agents")
PROTECTED_FILES = (".mcp.json",)
_PROTECTED = frozenset(name.casefold() for name in (*PROTECTED_DIRS, *PROTECTED_FILES))


@dataclass(frozen=True)
class Decision:
    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    outside_workspace: bool = False  # never covered by an "allow for the session"
    protected: bool = False  # a protected path: never covered by an "allow for the session"


def _inside(path: Path, workspace: Path) -> bool:
    return path == workspace or workspace in path.parents


def protected_path(path: Path, workspace: Path) -> str | None:
    """The protected part of `path` (e.g. ".peri/" or "sub/.git/"), or None when writing it is
    an ordinary edit. `path` is judged as written and after symlinks; only paths inside the
    workspace are judged (a write outside asks anyway)."""
    root = workspace.resolve()
    for candidate in (Path(os.path.abspath(path)), path.resolve()):
        for base in (workspace, root):
            if not _inside(candidate, base) or candidate == base:
                continue
            parts = candidate.relative_to(base).parts
            for i, part in enumerate(parts):
                if part.casefold() in _PROTECTED:
                    shown = "/".join(parts[: i + 1])
                    return shown if part.casefold() in _PROTECTED_FILE_NAMES else shown + "/"
    return None


_PROTECTED_FILE_NAMES = frozenset(name.casefold() for name in PROTECTED_FILES)


def decide(mode: Mode, kind: ToolKind, targets: list[Path], workspace: Path) -> Decision:
    """The policy for one call; `targets` are the fully resolved paths it would write."""
    if mode == "bypass":
        return Decision("allow")
    if kind == "read":
        return Decision("allow")
    if mode == "plan":
        return Decision("deny", "plan mode allows only read-only tools; present the plan instead")
    root = workspace.resolve()
    outside = [p for p in targets if not _inside(p.resolve(), root)]
    if outside:
        return Decision(
            "ask", f"writes outside the workspace: {outside[0]}", outside_workspace=True
        )
    for target in targets:
        protected = protected_path(target, workspace)
        if protected is not None:
            return Decision("ask", f"writes the protected path {protected}", protected=True)
    if kind == "write" and mode == "accept-edits":
        return Decision("allow")
    what = {
        "write": "edits files",
        "execute": "runs a command",
        "external": "calls an external tool",
    }
    return Decision("ask", what[kind])
