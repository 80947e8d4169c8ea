"""Permission modes and decisions, in one place (CONTRACT.md §6)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from peri_cli.core.modes import MODES, Mode
from peri_cli.core.tools import ToolKind

__all__ = ["MODES", "Decision", "Mode", "PermissionPolicy", "decide"]


@dataclass(frozen=True)
class Decision:
    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    outside_workspace: bool = False  # never covered by an "allow for the session"


def _inside(path: Path, workspace: Path) -> bool:
    return path == workspace or workspace in path.parents


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
    if kind == "write" and mode == "accept-edits":
        return Decision("allow")
    what = {
        "write": "edits files",
        "execute": "runs a command",
        "external": "calls an external tool",
    }
    return Decision("ask", what[kind])


@dataclass
class PermissionPolicy:
    """The mode plus what the user allowed for the rest of the session."""

    mode: Mode
    workspace: Path
    session_allowed: set[str] = field(default_factory=set)  # tool names allowed for the session

    def decide(self, tool: str, kind: ToolKind, targets: list[Path]) -> Decision:
        decision = decide(self.mode, kind, targets, self.workspace)
        if (
            decision.action == "ask"
            and not decision.outside_workspace
            and tool in self.session_allowed
        ):
            return Decision("allow")
        return decision
