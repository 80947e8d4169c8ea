"""Real MCP servers for tests (here and in tests/e2e): `mcp-server-time` from PyPI and the
in-repo ones in servers/, plus ways to find their processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from peri_cli.mcp.config import ServerConfig

SERVERS = Path(__file__).parent / "servers"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


def stdio(name: str, script: str, *args: str, **kw: object) -> ServerConfig:
    """An in-repo stdio server, run with this interpreter."""
    return ServerConfig(
        name=name,
        scope="user",
        source=Path("test"),
        transport="stdio",
        command=sys.executable,
        args=(str(SERVERS / script), *args),
        **kw,  # type: ignore[arg-type]
    )


def time_server(name: str = "time", **kw: object) -> ServerConfig:
    return ServerConfig(
        name=name,
        scope="user",
        source=Path("test"),
        transport="stdio",
        command=str(TIME_SERVER),
        args=("--local-timezone", "UTC"),
        **kw,  # type: ignore[arg-type]
    )


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def pids(pidfile: Path) -> list[int]:
    return [int(x) for x in pidfile.read_text().split()] if pidfile.exists() else []


def wait_for(predicate, timeout: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    """Poll until `predicate()` is true; False after `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


def env_for(pidfile: Path, **extra: str) -> dict[str, str]:
    """This process's environment, plus where test servers note their pids."""
    return {**os.environ, "PERI_TEST_PIDFILE": str(pidfile), **extra}


def _start_http(sse: bool) -> tuple[subprocess.Popen[str], str]:
    args = [sys.executable, str(SERVERS / "http_server.py"), *(["--sse"] if sse else [])]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=SERVERS
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("URL "), line
    return proc, line.split()[1]


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def http_server(*, sse: bool = False) -> Iterator[str]:
    """The in-repo streamable-HTTP (or SSE) server while the block runs; yields its URL."""
    proc, url = _start_http(sse)
    try:
        yield url
    finally:
        _stop(proc)


def server_processes(pidfile: Path, but: int | None = None) -> list[int]:
    """Live processes started with this pid file in their environment (except `but`, the peri
    that has it too, and the provider's stream worker `peri -p` starts): every MCP server that
    peri started, mcp-server-time included, whatever their parent now is."""
    needle = f"PERI_TEST_PIDFILE={pidfile}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        mine = int(entry.name) != but and needle in env.split(b"\0")
        if mine and alive(int(entry.name)) and not stream_worker(entry):
            found.append(int(entry.name))
    return found


def stream_worker(proc: Path) -> bool:
    """`peri -p`'s stream worker (`providers/prestart.py`): Peri's own child, not a server."""
    try:
        return b"peri_cli.providers.worker" in (proc / "cmdline").read_bytes()
    except OSError:
        return False
