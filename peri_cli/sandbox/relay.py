"""Inside the sandbox: a loopback port that a relay joins to the proxy's Unix socket, and the
environment that points programs at it (HTTP clients use the `*_PROXY` variables; curl reads
only the lower-case `http_proxy`, others only the upper-case ones, so both are set)."""

from __future__ import annotations

from pathlib import Path

from peri_cli.base import programs

RELAY_PORT = 3128  # the sandbox has its own network namespace: no other program holds it
# socat reads these as address syntax (`,` options, `:` parameters, `!!` two addresses)
_SOCAT_SPECIAL = frozenset(",:!\"'\\ \t\n$")


def relay_command(port: int, socket_path: Path) -> list[str]:
    """The socat command, run inside the sandbox, that listens on 127.0.0.1:`port` and joins
    each connection to the proxy's socket at `socket_path` (its path inside the sandbox)."""
    text = str(socket_path)
    if not 0 < port < 65536:
        raise ValueError(f"not a TCP port: {port}")
    if _SOCAT_SPECIAL & set(text):
        raise ValueError(f"socat cannot name a socket path with these characters: {text!r}")
    return [
        programs.find("socat") or "socat",  # (its full path, as bwrap and the hook shell's)
        f"TCP-LISTEN:{port},fork,reuseaddr,bind=127.0.0.1",
        f"UNIX-CONNECT:{text}",
    ]


def proxy_env(port: int) -> dict[str, str]:
    """HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (SOCKS5 with names resolved by the proxy, so the
    domain is judged, not an address the sandbox cannot look up), in both cases. NO_PROXY is
    emptied: `localhost` too must go through the proxy, which resolves it on the host."""
    http = f"http://127.0.0.1:{port}"
    socks = f"socks5h://127.0.0.1:{port}"
    env = {"HTTP_PROXY": http, "HTTPS_PROXY": http, "ALL_PROXY": socks, "NO_PROXY": ""}
    return env | {key.lower(): value for key, value in env.items()}
