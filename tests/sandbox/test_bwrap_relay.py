"""The proxy seam: with `proxy_socket` set, a command inside reaches the host's proxy socket
through socat on the loopback port that HTTP_PROXY names, and nothing else."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.sandbox_policy import SandboxPlaces, build_policy
from peri_cli.sandbox.probe import probe
from peri_cli.sandbox.runner import BwrapSandbox

pytestmark = [
    pytest.mark.skipif(not probe().available, reason=probe().why_not),
    pytest.mark.skipif(shutil.which("socat") is None, reason="socat is not installed"),
]


def test_the_relay_reaches_the_proxy_socket_only(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    for d in (ws, home, tmp_path / "t"):
        d.mkdir()
    path = tmp_path / "proxy.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(5)

    def serve() -> None:
        conn, _ = server.accept()  # socat's readiness check may come first: answer each
        while True:
            data = conn.recv(1024)
            if data:
                conn.sendall(b"PROXY-SAW:" + data.split(b"\r\n")[0])
                conn.close()
                return
            conn.close()
            conn, _ = server.accept()

    threading.Thread(target=serve, daemon=True).start()
    places = SandboxPlaces(ws, home, home / ".peri", tmp_path / "t", {})
    policy = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    sandbox = BwrapSandbox(policy.with_proxy(path), lambda _: False)
    script = (
        "import os, socket, urllib.parse as u\n"
        "p = u.urlsplit(os.environ['HTTPS_PROXY'])\n"
        "s = socket.create_connection((p.hostname, p.port), 5)\n"
        "s.sendall(b'CONNECT pypi.org:443 HTTP/1.1\\r\\n\\r\\n')\n"
        "print(s.recv(100).decode())\n"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    wrapped = sandbox.wrap(["python3", "-c", script], env, ws)
    done = subprocess.run(
        wrapped.argv, env=wrapped.env, capture_output=True, text=True, timeout=30, check=False
    )
    wrapped.finish()
    sandbox.close()
    server.close()
    assert "PROXY-SAW:CONNECT pypi.org:443 HTTP/1.1" in done.stdout, done.stdout + done.stderr


def test_the_relay_listens_before_the_command_starts(tmp_path: Path) -> None:
    """The wait before the command is what makes its first connection work: a connect made
    the moment the command starts (bash's own /dev/tcp, no program to load) finds the relay."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    for d in (ws, home, tmp_path / "t"):
        d.mkdir()
    path = tmp_path / "proxy.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(50)
    places = SandboxPlaces(ws, home, home / ".peri", tmp_path / "t", {})
    policy = build_policy(SandboxSettings(enabled=True), places, [], trusted=True)
    sandbox = BwrapSandbox(policy.with_proxy(path), lambda _: False)
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    command = "exec 3<>/dev/tcp/127.0.0.1/3128 && echo connected"
    try:
        for _ in range(5):
            wrapped = sandbox.wrap(["bash", "-c", command], env, ws)
            done = subprocess.run(
                wrapped.argv,
                env=wrapped.env,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            wrapped.finish()
            assert done.stdout.strip() == "connected", done.stdout + done.stderr
    finally:
        sandbox.close()
        server.close()
