"""The macOS Seatbelt profile of a sandbox policy, for `sandbox-exec -p PROFILE bash -c CMD`.

The same policy as bubblewrap's, in Seatbelt's terms: reading is allowed but for hidden paths
(allowRead brings some back), writing only under the writable roots and never under read-only
ones, Unix sockets only to the allowed paths, and the network only to the relay's loopback port.
Later rules win in Seatbelt, so the order below is the precedence.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from peri_cli.permissions.sandbox_policy import SandboxPolicy
from peri_cli.sandbox.relay import RELAY_PORT

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

_HEADER = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm)
(allow file-read*)
(allow file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/random")
       (literal "/dev/urandom") (literal "/dev/tty"))
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))"""


def quote(path: Path | str) -> str:
    """A Seatbelt string literal (backslashes and quotes escaped)."""
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _rule(action: str, operation: str, paths: Iterable[Path]) -> list[str]:
    listed = [f"(subpath {quote(p)})" for p in paths]
    if not listed:
        return []
    return [f"({action} {operation}", *(f"  {item}" for item in listed), ")"]


def profile(policy: SandboxPolicy) -> str:
    """The profile text."""
    lines = [_HEADER]
    lines += _rule("deny", "file-read*", policy.hidden)
    lines += _rule("allow", "file-read*", policy.revealed)
    lines += _rule("allow", "file-write*", policy.writable)
    lines += _rule("deny", "file-write*", (*policy.read_only, *policy.guarded, *policy.protected))
    lines += _network(policy)
    return "\n".join(lines) + "\n"


def _network(policy: SandboxPolicy) -> list[str]:
    lines: list[str] = []
    if policy.allow_all_unix_sockets:
        lines.append('(allow network* (remote unix-socket (path-regex #"^/")))')
    for sock in policy.unix_sockets:
        lines.append(f"(allow network* (remote unix-socket (path-literal {quote(sock)})))")
    if policy.proxy_socket is not None:
        lines.append(f'(allow network-outbound (remote ip "localhost:{RELAY_PORT}"))')
        proxy = quote(policy.proxy_socket)
        lines.append(f"(allow network-outbound (remote unix-socket (path-literal {proxy})))")
    if policy.allow_local_binding:
        lines.append('(allow network-bind (local ip "localhost:*"))')
        lines.append('(allow network-inbound (local ip "localhost:*"))')
    return lines


def command_line(policy: SandboxPolicy, argv: list[str]) -> list[str]:
    return [SANDBOX_EXEC, "-p", profile(policy), *argv]
