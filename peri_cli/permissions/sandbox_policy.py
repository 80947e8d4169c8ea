"""What a sandboxed command may touch, as data: the one policy the bubblewrap and Seatbelt adapters
(`peri_cli/sandbox/`) turn into their own terms. Pure: paths are resolved, nothing is read.

The file system is a list of mounts over a read-only root, applied shallowest first so that a
deeper path overrides its parent (the workspace writable, its `.git/hooks` read-only again).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.rule_syntax import Rule
from peri_cli.permissions.truststore import TRUST_FILE

# Secrets every user has; hidden unless a setting's `allowRead` brings one back.
DEFAULT_HIDDEN = ("~/.ssh", "~/.aws", "~/.gnupg", "~/.netrc")
# Protected folders a command may not create where they are missing: read-only stand-ins (empty
# folders) at the workspace's root and at each nested repository's root. A missing protected
# *file* (`.mcp.json`, `.git/commondir`) gets none: an empty one would be a parse error, left
# behind after a kill and committed by `git add -A`; what appears is moved aside after the
# command instead (`sandbox/guard.py`).
STUBBED_AT_ROOT = (".peri", ".claude", ".agents")
# In each git folder: hooks run code when the user's own git runs there, so a missing one is
# stood in for too.
STUBBED_IN_GIT_DIR = ("hooks",)
# Where host programs keep their Unix sockets: a read-only mount does not stop connect(), so
# these get a fresh empty tmpfs instead.
SOCKET_DIRS = ("/tmp", "/run", "/var/run")

# mask: fresh tmpfs; readable: bound back read-only (under a mask); writable; read_only: bound
# read-only over something writable; hidden: replaced by an empty, read-only stand-in; socket:
# one Unix socket bound in (allowUnixSockets, the proxy's).
# pin: a folder in the workspace that holds guarded paths (`.git`), bound onto itself so that it
# is a mount point: it cannot be renamed away and replaced by one the command made.
# read_only is stood in for where missing (the guarded folders); protected is bound read-only
# where present and left alone where missing (a protected path known to exist).
MountKind = Literal[
    "mask", "readable", "writable", "pin", "read_only", "protected", "hidden", "reveal", "socket"
]
_PRIORITY: Mapping[MountKind, int] = {
    "mask": 0,
    "readable": 1,
    "writable": 2,
    "pin": 3,
    "socket": 4,
    "read_only": 5,
    "protected": 5,
    "hidden": 6,
    "reveal": 7,
}


@dataclass(frozen=True)
class Mount:
    path: Path
    kind: MountKind


@dataclass(frozen=True)
class Protected:
    """The protected paths the walk found in the workspace (`sandbox/protected.py`), and those
    Peri learned of since: each bound read-only in the commands that start from now on."""

    paths: tuple[Path, ...] = ()  # existing protected files and folders (`.mcp.json`, `.claude`)
    git_dirs: tuple[Path, ...] = ()  # git folders (the workspace's, nested ones, submodules')
    roots: tuple[Path, ...] = ()  # nested repositories' folders (the workspace is one too)


@dataclass(frozen=True)
class SandboxPolicy:
    """The resolved sandbox of one session."""

    workspace: Path
    session_tmp: Path
    writable: tuple[Path, ...]
    read_only: tuple[Path, ...]
    guarded: tuple[Path, ...]  # protected folders made read-only whether they exist or not
    hidden: tuple[Path, ...]
    revealed: tuple[Path, ...]  # allowRead: readable again inside a hidden folder
    masked: tuple[Path, ...]
    readable: tuple[Path, ...]  # under a masked folder but needed read-only (HOME, PERI_HOME)
    unix_sockets: tuple[Path, ...]
    allow_all_unix_sockets: bool = False
    allow_local_binding: bool = False
    domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    excluded_commands: tuple[str, ...] = ()
    # The domain proxy's Unix socket (outside the sandbox); None: no network at all inside.
    proxy_socket: Path | None = None
    env_extra: Mapping[str, str] = field(default_factory=dict)
    protected: tuple[Path, ...] = ()  # protected paths known to exist: read-only while they do
    git_dirs: tuple[Path, ...] = ()  # pinned

    def with_protected(self, found: Protected) -> SandboxPolicy:
        """The policy with the protected paths known now (the walk's, and those learned)."""
        guarded, protected, git_dirs = _protected(self.workspace, found)
        return replace(self, guarded=guarded, protected=protected, git_dirs=git_dirs)

    def with_proxy(self, socket: Path | None) -> SandboxPolicy:
        return replace(self, proxy_socket=socket)

    def mounts(self) -> list[Mount]:
        """Every mount over the read-only root, in the order they must be applied."""
        found: dict[Path, MountKind] = {}
        groups: list[tuple[MountKind, Iterable[Path]]] = [
            ("mask", self.masked),
            ("readable", self.readable),
            ("writable", self.writable),
            ("pin", self.pinned),
            ("socket", (*self.unix_sockets, *_opt(self.proxy_socket))),
            ("read_only", (*self.read_only, *self.guarded)),
            ("protected", self.protected),
            ("hidden", self.hidden),
            ("reveal", self.revealed),
        ]
        for kind, paths in groups:
            for path in paths:
                old = found.get(path)
                if old is None or _PRIORITY[kind] > _PRIORITY[old]:
                    found[path] = kind
        order = sorted(found.items(), key=lambda item: (len(item[0].parts), _PRIORITY[item[1]]))
        return [Mount(path, kind) for path, kind in order]

    def governing(self, path: Path) -> MountKind | None:
        """The kind of the deepest mount holding `path` (None: only the read-only root)."""
        best: Mount | None = None
        for mount in self.mounts():
            if _within(path, mount.path) and (
                best is None or len(mount.path.parts) >= len(best.path.parts)
            ):
                best = mount
        return None if best is None else best.kind

    @property
    def pinned(self) -> tuple[Path, ...]:
        """The git folders, bound onto themselves (so they cannot be renamed away)."""
        return self.git_dirs

    def writable_at(self, path: Path) -> bool:
        return self.governing(path) in ("writable", "socket", "pin")


def _opt(path: Path | None) -> tuple[Path, ...]:
    return () if path is None else (path,)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True)
class SandboxPlaces:
    """Where things are for one session (the policy's inputs besides the settings)."""

    workspace: Path
    home: Path
    peri_home: Path
    session_tmp: Path
    env: Mapping[str, str] = field(default_factory=dict)
    # The protected paths in the workspace (`sandbox/protected.py`'s walk)
    protected: Protected = field(default_factory=Protected)
    # The folders Peri's helper processes run from (its interpreter and packages, ripgrep):
    # readable inside where a mask would hide them (Peri installed under /tmp).
    runtime: tuple[Path, ...] = ()


def build_policy(
    settings: SandboxSettings, places: SandboxPlaces, rules: Iterable[Rule], *, trusted: bool
) -> SandboxPolicy:
    """The policy of `settings` for these places; `rules` add WebFetch domains (allow rules that
    apply widen the list, deny rules narrow it)."""
    fs, net = settings.filesystem, settings.network

    def paths(values: Iterable[str]) -> tuple[Path, ...]:
        return tuple(dict.fromkeys(resolve_path(v, places) for v in values))

    workspace = _real(places.workspace)
    peri_home = _real(places.peri_home)
    allowed, denied = webfetch_domains(rules, trusted=trusted)
    masked = [Path(d) for d in SOCKET_DIRS]
    if runtime_dir := places.env.get("XDG_RUNTIME_DIR"):
        masked.append(Path(runtime_dir))
    masked_real = tuple(dict.fromkeys(_real(p) for p in masked))
    home = _real(places.home)
    readable = tuple(p for p in (home, peri_home) if any(_within(p, m) for m in masked_real))
    guarded, protected, git_dirs = _protected(workspace, places.protected)
    writable = (workspace, _real(places.session_tmp), *paths(fs.allowWrite))
    readable += _runtime_under_masks(places.runtime, masked_real, (*writable, *readable))
    return SandboxPolicy(
        workspace=workspace,
        session_tmp=_real(places.session_tmp),
        writable=writable,
        read_only=(peri_home, *paths(fs.denyWrite)),
        guarded=guarded,
        hidden=(*paths(DEFAULT_HIDDEN), peri_home / TRUST_FILE, *paths(fs.denyRead)),
        revealed=paths(fs.allowRead),
        masked=masked_real,
        readable=readable,
        unix_sockets=paths(net.allowUnixSockets),
        allow_all_unix_sockets=net.allowAllUnixSockets,
        allow_local_binding=net.allowLocalBinding,
        domains=tuple(d for d in dict.fromkeys([*net.allowedDomains, *allowed]) if d not in denied),
        denied_domains=tuple(denied),
        excluded_commands=tuple(settings.excludedCommands),
        env_extra={"TMPDIR": str(_real(places.session_tmp))},
        protected=protected,
        git_dirs=git_dirs,
    )


def _protected(
    workspace: Path, found: Protected
) -> tuple[tuple[Path, ...], tuple[Path, ...], tuple[Path, ...]]:
    """(guarded, protected, git_dirs): the folders stood in for where missing, the protected
    paths bound where present, and the git folders pinned; only what is in the workspace
    (a link out of it guards nothing here, and outside it nothing is writable anyway)."""

    def mine(paths: Iterable[Path]) -> list[Path]:
        real = (_real(p) for p in paths)
        return [p for p in dict.fromkeys(real) if p != workspace and workspace in p.parents]

    git_dirs = mine(found.git_dirs)
    pinned = set(git_dirs)
    protected = [p for p in mine(found.paths) if p not in pinned]  # (git folders: pinned)
    roots = [workspace, *mine(found.roots)]
    guarded = [root / name for root in roots for name in STUBBED_AT_ROOT]
    guarded += [git / name for git in git_dirs for name in STUBBED_IN_GIT_DIR]
    dot_git = workspace / ".git"
    if dot_git not in git_dirs and dot_git not in protected:
        guarded.append(dot_git)  # none yet: `git init` cannot plant a repository's hooks
    present = set(protected)
    guarded = [g for g in dict.fromkeys(guarded) if g not in present]
    return tuple(guarded), tuple(protected), tuple(git_dirs)


def _runtime_under_masks(
    runtime: Iterable[Path], masked: tuple[Path, ...], shown: tuple[Path, ...]
) -> tuple[Path, ...]:
    """The runtime folders a mask would hide and nothing else already shows (a runtime inside
    the workspace stays as writable as the workspace)."""
    out: list[Path] = []
    for path in dict.fromkeys(_real(p) for p in runtime):
        hidden = any(_within(path, m) for m in masked)
        if hidden and not any(_within(path, s) for s in (*shown, *out)):
            out.append(path)
    return tuple(out)


def resolve_path(value: str, places: SandboxPlaces) -> Path:
    """A settings path: `~` is the user's home, a relative one is in the workspace."""
    path = places.home / value[2:] if value == "~" or value.startswith("~/") else Path(value)
    if not path.is_absolute():
        path = places.workspace / path
    return _real(path)


def _real(path: Path) -> Path:
    """`path` with symlinks resolved as far as it exists (a sandbox mounts real paths)."""
    return Path(os.path.realpath(path))


def webfetch_domains(rules: Iterable[Rule], *, trusted: bool) -> tuple[list[str], list[str]]:
    """The domains of `WebFetch(domain:…)` rules that apply: (allowed, denied)."""
    allowed: list[str] = []
    denied: list[str] = []
    for rule in rules:
        spec = rule.specifier or ""
        if rule.tool != "WebFetch" or not spec.startswith("domain:") or not rule.applies(trusted):
            continue
        domain = spec.removeprefix("domain:").strip().lower()
        if rule.behavior == "allow":
            allowed.append(domain)
        elif rule.behavior == "deny":
            denied.append(domain)
    return allowed, denied
