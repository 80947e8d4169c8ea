"""The bubblewrap command line of a sandbox policy (Linux).

The root is bound read-only, the policy's mounts go over it shallowest first, and the command
gets its own PID and network namespaces, a fresh /proc and /dev, a new session (so
`TIOCSTI` cannot type into the user's terminal) and no capabilities; it dies with Peri. The only
way out to the network is the domain proxy's Unix socket, bound in and offered on a loopback
port by `socat` (`relay_script`).
"""

from __future__ import annotations

import errno
import os
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base import programs
from peri_cli.permissions.sandbox_policy import Mount, SandboxPolicy
from peri_cli.sandbox.relay import RELAY_PORT, proxy_env, relay_command

BWRAP = "bwrap"
# Only the namespaces the boundary needs: IPC, UTS and cgroup namespaces each cost 4-7 ms a
# command on the machines measured (bench/sandbox_overhead.py) and guard nothing the policy names.
_BASE = [
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-net",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    # The kernel's settings read-only whatever bubblewrap's version: 0.8 skips /proc/sys when
    # access(W_OK) fails on the folder, which leaves the sysctl files writable to uid 0 (a
    # `kernel.core_pattern` pipe runs as root on the host). /sys is bound read-only again by
    # name, not left to how the root's bind treats its sub-mounts.
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    "--ro-bind-try",
    "/sys",
    "/sys",
]


@dataclass
class Plan:
    """A command line and the host paths bubblewrap will create as mount points (missing
    guarded paths), which the caller removes again once nothing uses them."""

    argv: list[str]
    env: dict[str, str]
    created: list[Path] = field(default_factory=list)


def build(
    policy: SandboxPolicy,
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    *,
    empty_dir: Path,
) -> Plan:
    """The bwrap command line that runs `argv` in `cwd` under `policy`. `empty_dir`: an empty
    folder outside every writable root, mounted read-only where a guarded folder is missing."""
    args = [bwrap_program(policy), *_BASE]
    if os.geteuid() == 0:
        # Run as root bubblewrap keeps every capability unless told (a command could unmount the
        # read-only `.git/hooks`); as a user it drops them itself.
        args += ["--cap-drop", "ALL"]
    created: list[Path] = []
    masks: list[str] = []
    for mount in policy.mounts():
        more = _mount_args(mount, policy, empty_dir, created)
        if mount.kind == "mask" and more:
            masks += ["--remount-ro", str(mount.path)]
        args += more
    # Last, once everything is bound into them: the masks themselves read-only too, so a write
    # beside the workspace fails instead of landing in a tmpfs that vanishes with the command.
    args += masks
    args += ["--chdir", str(cwd)]
    env = {**env, **policy.env_extra}
    command = list(argv)
    if policy.proxy_socket is not None:
        env |= proxy_env(RELAY_PORT)
        command = ["bash", "-c", relay_script(policy.proxy_socket), "peri-relay", *command]
    return Plan([*args, "--", *command], env, created)


def bwrap_program(policy: SandboxPolicy) -> str:
    """bwrap's full path, from a PATH entry no sandboxed command can write (one planted in an
    activated `.venv/bin` would run every later command unsandboxed)."""
    found = programs.find(BWRAP, extra=policy.writable)
    if found is None:
        why = programs.missing(BWRAP, extra=policy.writable)
        raise FileNotFoundError(errno.ENOENT, f"bubblewrap cannot be used: {why}")
    return found


def relay_script(socket: Path) -> str:
    """Start socat between the loopback port and the proxy's socket, wait until it listens,
    then become the command (`"$@"`), so the command's first connection already finds it.

    The wait forks nothing: each try is a connect from the shell itself, and the pause between
    tries (1 ms) is `read -t` on a UDP socket no one sends to. A subshell per try and
    `sleep 0.01` cost 15-40 ms a command (bench/sandbox_overhead.py); socat listens within
    about 5 ms."""
    return (
        f"{shlex.join(relay_command(RELAY_PORT, socket))} >/dev/null 2>&1 </dev/null &\n"
        "i=0; while [ $i -lt 2000 ]; do\n"
        f"  if {{ true 3<>/dev/tcp/127.0.0.1/{RELAY_PORT}; }} 2>/dev/null; then break; fi\n"
        "  read -r -t 0.001 <>/dev/udp/127.0.0.1/9 2>/dev/null\n"
        "  [ $? -gt 128 ] || sleep 0.01  # (no UDP socket: no pause without a fork either)\n"
        "  i=$((i+1))\n"
        "done\n"
        'exec "$@"'
    )


def _mount_args(
    mount: Mount, policy: SandboxPolicy, empty_dir: Path, created: list[Path]
) -> list[str]:
    path = str(mount.path)
    info = _stat(mount.path)
    if mount.kind == "mask":
        return ["--tmpfs", path] if info is not None and stat.S_ISDIR(info.st_mode) else []
    if mount.kind == "pin":
        return _pin(mount.path, info)
    if mount.kind == "read_only" and info is None:
        return _guard_missing(mount.path, policy, empty_dir, created)
    if info is None:
        return []  # nothing there to bind, hide or reveal
    if mount.kind in ("writable", "socket"):
        return ["--bind", path, path]
    if mount.kind in ("readable", "read_only", "protected", "reveal"):
        return ["--ro-bind", path, path]
    # hidden: an empty read-only folder, or an empty file
    if stat.S_ISDIR(info.st_mode):
        return ["--tmpfs", path, "--remount-ro", path]
    return ["--ro-bind", "/dev/null", path]


def _pin(path: Path, info: os.stat_result | None) -> list[str]:
    """A git folder bound onto itself (a mount point cannot be renamed away); one that became
    something else, read-only; one gone, nothing (the workspace's own is a guarded folder)."""
    if info is None:
        return []
    if stat.S_ISDIR(info.st_mode):
        return ["--bind", str(path), str(path)]
    return ["--ro-bind", str(path), str(path)]


def _guard_missing(
    path: Path, policy: SandboxPolicy, empty_dir: Path, created: list[Path]
) -> list[str]:
    """A guarded folder that does not exist yet, made read-only anyway: an empty folder is
    mounted there, so the command cannot create it (a repository's hooks, a settings folder).
    Only folders: a protected file that is missing is left to the check after the command."""
    if not (path == policy.workspace or policy.workspace in path.parents):
        return []  # outside the workspace nothing is writable to begin with
    # Walk down from the workspace: a file on the way (`.git` of a worktree) is guarded itself.
    if any(p in created for p in path.parents):
        return []  # inside a folder already guarded whole
    current = policy.workspace
    missing: list[Path] = []
    for part in path.relative_to(policy.workspace).parts:
        current = current / part
        info = _stat(current)
        if info is None:
            missing.append(current)
        elif not stat.S_ISDIR(info.st_mode):
            return []  # under a file (a worktree's `.git`): pinned read-only already
    created.extend(missing)
    return ["--ro-bind", str(empty_dir), str(path)]


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except (OSError, ValueError):
        return None
