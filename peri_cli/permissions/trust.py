"""Workspace trust: what a repository's own files would loosen, and whether the user trusts it.

A cloned repository must not be able to raise the user's permission mode, start servers, add allow
rules or hooks, or pull files from outside the workspace into the prompt. Each feature that reads
such a thing from the workspace contributes `Loosening`s (a `Detector`: `loosenings.DETECTORS`, or
built by the caller, as the guide probe does); until the workspace is trusted they are ignored with
one warning line, and settings that only make Peri stricter always apply. The answer is kept by
`truststore.TrustStore`; this module decides from it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from peri_cli.base.settings import SettingKey, SettingsLayer
from peri_cli.base.textsafe import visible
from peri_cli.context.guides import GuideResult
from peri_cli.permissions.truststore import TrustRecord

Kind = Literal[
    "permission_mode",
    "mcp_server",
    "guide_path",
    "import",
    # for the features that plug in later
    "allow_rule",
    "hook",
    "skill_tools",
    "command_tools",
    "meta_harness",
    "plugin",
    "status_line",
]


@dataclass(frozen=True)
class Loosening:
    """One thing the workspace's files would enable, shown in the trust dialog and warning."""

    kind: Kind
    what: str  # e.g. 'permission_mode "bypass"', 'import ../secret.txt -> /tmp/secret.txt'
    source: str  # the file that asks for it, as the user knows it (".peri/settings.json")
    settings: tuple[SettingKey, ...] = ()  # settings values withheld until trusted

    @property
    def identity(self) -> str:
        """Stable across runs, so a declined loosening is not asked about again; a digest, so the
        trust record holds no path or command from the repository."""
        text = f"{self.kind}|{self.source}|{self.what}"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]

    def describe(self) -> str:
        """One line for the user; file-derived text made visible."""
        return visible(f"{self.what} (from {self.source})")


@dataclass(frozen=True)
class WorkspaceFiles:
    """What the detectors look at: the workspace and its settings layers."""

    workspace: Path
    layers: tuple[SettingsLayer, ...]
    mode_flag: str | None = None  # `--permission-mode` given: the files' mode changes nothing

    def label(self, path: Path) -> str:
        try:
            return path.relative_to(self.workspace).as_posix()
        except ValueError:
            return str(path)


Detector = Callable[[WorkspaceFiles], list[Loosening]]


def withheld_settings(loosenings: Iterable[Loosening]) -> list[SettingKey]:
    """The settings values to leave out while the workspace is not trusted."""
    return [key for item in loosenings for key in item.settings]


# --- the decision ------------------------------------------------------------------------------

Why = Literal["flag", "recorded", "declined", "unknown", "nothing"]


@dataclass
class TrustState:
    """Whether this run trusts the workspace, and what that changes."""

    workspace: Path
    loosenings: list[Loosening]
    trusted: bool
    why: Why
    ask: bool = False  # the TUI should ask: something to unlock the user has not answered about
    warnings: list[str] = field(default_factory=list)
    # The trust store's entry for this workspace as read at start, so the store is read once
    # (MCP's approved servers come from it too); an answer given this run replaces it.
    record: TrustRecord | None = None
    # The guides as read untrusted, when deciding trust needed them: the snapshot of a session
    # started untrusted takes them instead of reading the files again (`take_guides`).
    guides: GuideResult | None = None

    def take_guides(self) -> GuideResult | None:
        """The guides read while deciding, once, if the workspace is still untrusted."""
        guides, self.guides = self.guides, None
        return None if self.trusted else guides

    @property
    def ignored(self) -> list[Loosening]:
        """What is being ignored this run."""
        return [] if self.trusted else self.loosenings

    def warning(self) -> str | None:
        """The one line that says what an untrusted workspace's files asked for and was ignored."""
        if not self.ignored:
            return None
        shown = [item.describe() for item in self.ignored[:MAX_LISTED]]
        more = len(self.ignored) - len(shown)
        if more:
            shown.append(f"and {more} more")
        return (
            "workspace not trusted; ignoring what its files would loosen: "
            + "; ".join(shown)
            + ". Run with --trust-workspace to apply them."
        )


MAX_LISTED = 4


def assess(
    workspace: Path,
    loosenings: Sequence[Loosening],
    *,
    record: TrustRecord | None,
    flag: bool,
    interactive: bool,
) -> TrustState:
    """Decide trust for this run: the flag, then the recorded answer; nothing to unlock needs
    no trust. `interactive` (the TUI) asks about loosenings the user has not declined before."""
    items = list(loosenings)
    if flag:
        return TrustState(workspace, items, True, "flag", record=record)
    if record is not None and record.trusted:
        return TrustState(workspace, items, True, "recorded", record=record)
    if not items:
        return TrustState(workspace, items, False, "nothing", record=record)
    declined = record.declined if record is not None else frozenset()
    new = [item for item in items if item.identity not in declined]
    why: Why = "declined" if record is not None else "unknown"
    ask = interactive and bool(new)
    return TrustState(workspace, items, False, why, ask=ask, record=record)
