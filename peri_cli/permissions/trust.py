"""Workspace trust: what a repository's own files would loosen, and whether the user trusts it.

A cloned repository must not be able to raise the user's permission mode, start servers, add allow
rules or hooks, or pull files from outside the workspace into the prompt. Each feature that reads
such a thing from the workspace contributes `Loosening`s (a `Detector` in `DETECTORS`, or built by
the caller, as the guide probe does); until the workspace is trusted they are ignored with one
warning line, and settings that only make Peri stricter always apply. The answer is kept in
`$PERI_HOME/trusted-workspaces.json`, keyed by the resolved workspace path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from peri_cli.base.atomic import atomic_write
from peri_cli.base.mcp_entry import describe_line
from peri_cli.base.safe_read import SafeReadError, read_text
from peri_cli.base.settings import SettingKey, SettingsLayer
from peri_cli.base.textsafe import visible
from peri_cli.context.guide_imports import OutsidePath
from peri_cli.context.meta import CAPABILITY_NAMES

TRUST_FILE = "trusted-workspaces.json"
TRUST_FILE_VERSION = 1
MAX_TRUST_FILE_BYTES = 4 << 20
# Declined loosenings kept per workspace: a repository with thousands of them must not grow the
# file past its cap (beyond this many, the rest may be asked about again).
MAX_DECLINED = 1000

# Least to most permissive: a workspace file may move the mode left, never right.
MODE_RANK: dict[str, int] = {"plan": 0, "default": 1, "accept-edits": 2, "bypass": 3}

Kind = Literal[
    "permission_mode",
    "mcp_server",
    "guide_path",
    "import",
    # for the features that plug in later
    "allow_rule",
    "hook",
    "skill_tools",
    "meta_harness",
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


def permission_mode_loosening(files: WorkspaceFiles) -> list[Loosening]:
    """A workspace `permission_mode` more permissive than the user's own (or `default`)."""
    if files.mode_flag is not None:
        return []
    base: str = "default"
    for layer in files.layers:
        if not layer.from_workspace and "permission_mode" in layer.data:
            base = layer.data["permission_mode"]
    looser = [
        layer
        for layer in files.layers
        if layer.from_workspace
        and MODE_RANK.get(layer.data.get("permission_mode", base), 0) > MODE_RANK[base]
    ]
    # What trust would change: the mode with every workspace value applied vs without the looser.
    trusted = _mode_after(files.layers, base, withheld=())
    untrusted = _mode_after(files.layers, base, withheld=looser)
    if trusted == untrusted:
        return []
    source = next(layer for layer in reversed(files.layers) if "permission_mode" in layer.data)
    return [
        Loosening(
            "permission_mode",
            f'permission_mode "{trusted}"',
            files.label(source.path),
            tuple((layer.path, "permission_mode") for layer in looser),
        )
    ]


def _mode_after(
    layers: Sequence[SettingsLayer], base: str, withheld: Sequence[SettingsLayer]
) -> str:
    mode = base
    for layer in layers:
        if layer.from_workspace and layer not in withheld and "permission_mode" in layer.data:
            mode = layer.data["permission_mode"]
    return mode


def settings_mcp_servers(files: WorkspaceFiles) -> list[Loosening]:
    """`mcpServers` in a project settings file: commands a repository would run."""
    out: list[Loosening] = []
    for layer in files.layers:
        if not layer.from_workspace:
            continue
        for name, config in (layer.data.get("mcpServers") or {}).items():
            out.append(
                Loosening(
                    "mcp_server",
                    _server_shown(name, config),
                    files.label(layer.path),
                    ((layer.path, f"mcpServers.{name}"),),
                )
            )
    return out


def mcp_json_servers(files: WorkspaceFiles) -> list[Loosening]:
    """`mcpServers` in the workspace's `.mcp.json` (Claude Code's file): commands it would run.
    A file that cannot be read loosens nothing (peri_cli/mcp reports it)."""
    if not files.workspace.is_absolute():
        return []  # judging which settings to withhold: no file of this kind is involved
    path = files.workspace / ".mcp.json"
    try:
        data = json.loads(read_text(path, inside=files.workspace))
    except (SafeReadError, ValueError):
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    out: list[Loosening] = []
    for name, config in (servers if isinstance(servers, dict) else {}).items():
        out.append(Loosening("mcp_server", _server_shown(name, config), files.label(path)))
    return out


def _server_shown(name: str, config: Any) -> str:
    """The whole entry as written (command, args, cwd, env, url, headers), not just its command:
    an `env` or a header decides what runs and where data goes as much as the command does."""
    runs = describe_line(config)
    return f"MCP server {name!r}" + (f" ({runs})" if runs else "")


def meta_harness_loosening(files: WorkspaceFiles) -> list[Loosening]:
    """A project's `meta_harness` turning back on a capability the user's settings turn off."""
    user_off: set[str] = set()
    for layer in files.layers:
        if not layer.from_workspace:
            values = layer.data.get("meta_harness") or {}
            user_off |= {c for c in CAPABILITY_NAMES if values.get(c) is False}
    out: list[Loosening] = []
    for layer in files.layers:
        values = (layer.data.get("meta_harness") or {}) if layer.from_workspace else {}
        for name in sorted(user_off):
            if values.get(name) is True:
                out.append(
                    Loosening(
                        "meta_harness",
                        f"meta_harness {name!r} back on (your settings turn it off)",
                        files.label(layer.path),
                        ((layer.path, f"meta_harness.{name}"),),
                    )
                )
    return out


# One function per feature that reads something loosening from the workspace's settings; the
# ones that read other files (`.mcp.json`, skills) add theirs here too, or pass extra loosenings
# to `assess` the way the guide probe does.
DETECTORS: tuple[Detector, ...] = (
    permission_mode_loosening,
    settings_mcp_servers,
    mcp_json_servers,
    meta_harness_loosening,
)


def find_loosenings(
    files: WorkspaceFiles, detectors: Iterable[Detector] = DETECTORS
) -> list[Loosening]:
    return [item for detect in detectors for item in detect(files)]


def withheld_settings(loosenings: Iterable[Loosening]) -> list[SettingKey]:
    """The settings values to leave out while the workspace is not trusted."""
    return [key for item in loosenings for key in item.settings]


def guide_loosenings(outside: Iterable[OutsidePath], settings_file: str) -> list[Loosening]:
    """Project guide files, imports and `guides.extra_paths` (from `settings_file`) that lead
    out of the workspace."""
    out: list[Loosening] = []
    for item in outside:
        if item.kind == "import":
            out.append(Loosening("import", f"import {item.describe()}", item.source))
        elif item.kind == "extra_path":
            what = f"guides.extra_paths {item.describe()}"
            out.append(Loosening("guide_path", what, settings_file))
        else:  # the guide file itself is a link out of the workspace
            out.append(Loosening("guide_path", f"guide {item.describe()}", item.source))
    return out


# --- the recorded answers ----------------------------------------------------------------------


class TrustStoreError(Exception):
    """The trust record cannot be written; one line for the user."""


@dataclass(frozen=True)
class TrustRecord:
    """The user's answer for one workspace."""

    trusted: bool
    declined: frozenset[str] = frozenset()  # identities of loosenings the user said no to
    # Project MCP servers (their entries' fingerprints) the user let start, or said no to: one
    # added to `.mcp.json` after the workspace was trusted is asked about once.
    servers: frozenset[str] = frozenset()
    refused_servers: frozenset[str] = frozenset()


class TrustStore:
    """`$PERI_HOME/trusted-workspaces.json`: `{"version": 1, "workspaces": {path: record}}`."""

    def __init__(self, peri_home: Path) -> None:
        self.path = peri_home / TRUST_FILE

    def lookup(self, workspace: Path) -> tuple[TrustRecord | None, str | None]:
        """(the answer recorded for `workspace` or None, a warning when the file is unusable)."""
        try:
            entries = self._entries()
        except TrustStoreError as e:
            return None, f"{e}; no workspace counts as trusted"
        raw = entries.get(_key(workspace))
        if raw is None:
            return None, None
        record = _parse_record(raw)
        if record is None:
            return None, f"{self.path}: the entry for {workspace} is malformed; not trusted"
        return record, None

    def record(self, workspace: Path, record: TrustRecord) -> None:
        """Store the answer for `workspace` (atomically; a malformed file is never replaced)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked():
                entries = self._entries()
                entries[_key(workspace)] = _dump_record(record)
                data = {"version": TRUST_FILE_VERSION, "workspaces": entries}
                _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False))
        except OSError as e:
            raise TrustStoreError(f"{self.path}: cannot write ({e.strerror or e})") from e

    def remember_server(self, workspace: Path, fingerprint: str, *, start: bool) -> None:
        """Add the answer about one project MCP server to the workspace's record (kept as it
        is otherwise; a workspace with no record gets an untrusted one holding the answer)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked():
                entries = self._entries()
                old = _parse_record(entries.get(_key(workspace))) or TrustRecord(False)
                allowed, refused = set(old.servers), set(old.refused_servers)
                (allowed if start else refused).add(fingerprint)
                (refused if start else allowed).discard(fingerprint)
                record = TrustRecord(
                    old.trusted, old.declined, frozenset(allowed), frozenset(refused)
                )
                entries[_key(workspace)] = _dump_record(record)
                data = {"version": TRUST_FILE_VERSION, "workspaces": entries}
                _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False))
        except OSError as e:
            raise TrustStoreError(f"{self.path}: cannot write ({e.strerror or e})") from e

    def _entries(self) -> dict[str, Any]:
        try:
            text = read_text(self.path, max_bytes=MAX_TRUST_FILE_BYTES)
        except SafeReadError as e:
            if e.missing:
                return {}
            raise TrustStoreError(str(e)) from e
        try:
            data = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError) as e:
            raise TrustStoreError(f"{self.path}: not valid JSON") from e
        workspaces = data.get("workspaces", {}) if isinstance(data, dict) else None
        if not isinstance(workspaces, dict):
            raise TrustStoreError(f"{self.path}: malformed (expected an object of workspaces)")
        return dict(workspaces)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialise read-modify-write between two `peri` processes answering at once."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        fd = os.open(self.path.with_name(TRUST_FILE + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _key(workspace: Path) -> str:
    return os.path.realpath(workspace)


def _dump_record(record: TrustRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "trusted": record.trusted,
        "declined": sorted(record.declined)[:MAX_DECLINED],
    }
    if record.servers or record.refused_servers:
        out["servers"] = sorted(record.servers)[:MAX_DECLINED]
        out["refused_servers"] = sorted(record.refused_servers)[:MAX_DECLINED]
    out["updated"] = datetime.now(UTC).isoformat(timespec="seconds")
    return out


def _parse_record(raw: Any) -> TrustRecord | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("trusted"), bool):
        return None
    lists: list[frozenset[str]] = []
    for key in ("declined", "servers", "refused_servers"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
            return None
        lists.append(frozenset(value))
    return TrustRecord(raw["trusted"], *lists)


def _write_atomically(path: Path, text: str) -> None:
    atomic_write(path, (text + "\n").encode("utf-8"))


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
        return TrustState(workspace, items, True, "flag")
    if record is not None and record.trusted:
        return TrustState(workspace, items, True, "recorded")
    if not items:
        return TrustState(workspace, items, False, "nothing")
    declined = record.declined if record is not None else frozenset()
    new = [item for item in items if item.identity not in declined]
    why: Why = "declined" if record is not None else "unknown"
    return TrustState(workspace, items, False, why, ask=interactive and bool(new))
