"""The domain proxy end to end on loopback: curl and raw clients through the Unix socket and a
socat relay, to a local HTTP server reached as `localhost` (allowed) or `127.0.0.1` (not)."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from peri_cli.sandbox.gate import Answer, DomainGate
from peri_cli.sandbox.proxy import DomainProxy
from peri_cli.sandbox.relay import proxy_env, relay_command

pytestmark = pytest.mark.skipif(
    shutil.which("socat") is None or shutil.which("curl") is None, reason="needs socat and curl"
)


class _Origin(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = f"origin saw {self.path} host={self.headers['Host']}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def origin() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Origin)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


class Asker:
    """An ask callback that answers from a table and counts its questions."""

    def __init__(self, answers: dict[str, Answer]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, domain: str) -> Answer:
        self.asked.append(domain)
        await asyncio.sleep(0.05)  # long enough for other connections to queue behind it
        return self.answers.get(domain, "deny")


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    # a short path: a Unix socket's name is limited to 108 bytes
    folder = Path(tempfile.mkdtemp(prefix="peri-proxy-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def relay(sock_dir: Path) -> AsyncIterator[int]:
    """socat joining a loopback port to the proxy's socket, as inside the sandbox."""
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(*relay_command(port, sock_dir / "proxy.sock"))
    try:
        for _ in range(100):
            try:
                _, w = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.02)
                continue
            w.close()
            break
        yield port
    finally:
        proc.terminate()
        await proc.wait()


async def _curl(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        "curl", "-sS", "--max-time", "10", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode(errors="replace")


def _gate(asker: Asker | None = None, allowed: tuple[str, ...] = ("localhost",)) -> DomainGate:
    return DomainGate(allowed, ask=asker)


async def test_allowed_localhost_passes_and_127_is_refused(
    sock_dir: Path, relay: int, origin: int
) -> None:
    async with DomainProxy(_gate(), sock_dir / "proxy.sock"):
        proxy = f"http://127.0.0.1:{relay}"
        code, out = await _curl("--proxy", proxy, f"http://localhost:{origin}/a?b=1")
        assert code == 0 and out == f"origin saw /a?b=1 host=localhost:{origin}"
        code, out = await _curl("-i", "--proxy", proxy, f"http://127.0.0.1:{origin}/a")
        assert "403 Forbidden" in out and "127.0.0.1 is not an allowed domain" in out
        for spelling in ("2130706433", "0x7f000001", "127.1", "[::ffff:127.0.0.1]"):
            code, out = await _curl("-i", "--proxy", proxy, f"http://{spelling}:{origin}/")
            assert "403 Forbidden" in out, spelling


async def test_connect_tunnel_and_socks5_through_the_relay(
    sock_dir: Path, relay: int, origin: int
) -> None:
    async with DomainProxy(_gate(), sock_dir / "proxy.sock"):
        url = f"http://localhost:{origin}/t"
        code, out = await _curl("--proxytunnel", "--proxy", f"http://127.0.0.1:{relay}", url)
        assert code == 0 and out == f"origin saw /t host=localhost:{origin}"
        code, out = await _curl("--proxy", f"socks5h://127.0.0.1:{relay}", url)
        assert code == 0 and out == f"origin saw /t host=localhost:{origin}"
        code, out = await _curl(
            "--proxy", f"socks5h://127.0.0.1:{relay}", f"http://127.0.0.1:{origin}/"
        )
        assert code != 0 and "origin saw" not in out
        code, out = await _curl(
            "-p", "--proxy", f"http://127.0.0.1:{relay}", f"http://127.0.0.1:{origin}/"
        )
        assert code != 0 and "403" in out


async def test_the_environment_points_curl_at_the_relay(
    sock_dir: Path, relay: int, origin: int
) -> None:
    env = proxy_env(relay)
    assert env["https_proxy"] == env["HTTPS_PROXY"] == f"http://127.0.0.1:{relay}"
    assert env["ALL_PROXY"] == f"socks5h://127.0.0.1:{relay}" and env["no_proxy"] == ""
    async with DomainProxy(_gate(), sock_dir / "proxy.sock"):
        proc = await asyncio.create_subprocess_exec(
            "curl", "-sS", "--max-time", "10", f"http://localhost:{origin}/env",
            stdout=asyncio.subprocess.PIPE, env={"PATH": "/usr/bin:/bin", **env},
        )  # fmt: skip
        out, _ = await proc.communicate()
    assert out.decode() == f"origin saw /env host=localhost:{origin}"


async def _exchange(path: Path, data: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(), 5)  # to the end: the proxy closes
    finally:
        writer.close()


async def test_garbage_gets_an_error_and_the_proxy_keeps_serving(
    sock_dir: Path, origin: int
) -> None:
    path = sock_dir / "proxy.sock"
    async with DomainProxy(_gate(), path, head_timeout=0.5):
        assert b"400 Bad Request" in await _exchange(path, b"\x00\xff garbage\r\n\r\n")
        assert b"400 Bad Request" in await _exchange(path, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b"400" in await _exchange(path, b"GET ftp://localhost/ HTTP/1.1\r\n\r\n")
        assert b"400" in await _exchange(path, b"CONNECT localhost HTTP/1.1\r\n\r\n")
        assert b"431" in await _exchange(
            path, b"GET http://localhost/ HTTP/1.1\r\n" + b"X: y\r\n" * 20000
        )
        assert await _exchange(path, b"GET http://localhost/ HTTP/1.1\r\n") == b""  # timed out
        assert await _exchange(path, b"\x05\x01\x02") == b"\x05\xff"  # no method it takes
        assert await _exchange(path, b"\x05\x01\x00\x05\x02\x00\x01") == b"\x05\x00"  # then junk
        bind = b"\x05\x01\x00\x05\x02\x00\x03\x09localhost" + origin.to_bytes(2, "big")
        assert (await _exchange(path, bind))[:4] == b"\x05\x00\x05\x07"  # BIND: not supported
        request = f"GET http://localhost:{origin}/ok HTTP/1.1\r\n\r\n".encode()
        assert b"origin saw /ok" in await _exchange(path, request)


async def test_a_new_domain_is_asked_once_and_always_persists(
    sock_dir: Path, origin: int, tmp_path: Path
) -> None:
    from peri_cli.sandbox.allowlist import add_allowed_domain

    settings = tmp_path / ".peri" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "x", "sandbox": {"network": {"allowedDomains": ["a.org"]}}}')
    asker = Asker({"localhost": "always", "127.0.0.1": "deny"})
    gate = DomainGate(ask=asker, remember=lambda d, _scope: add_allowed_domain(settings, d))
    path = sock_dir / "proxy.sock"
    async with DomainProxy(gate, path):
        request = f"GET http://localhost:{origin}/x HTTP/1.1\r\n\r\n".encode()
        answers = await asyncio.gather(*(_exchange(path, request) for _ in range(5)))
        assert all(b"origin saw /x" in a for a in answers)
        denied = f"GET http://127.0.0.1:{origin}/ HTTP/1.1\r\n\r\n".encode()
        assert b"403" in await _exchange(path, denied)
        assert b"403" in await _exchange(path, denied.replace(b"127.0.0.1", b"2130706433"))
        assert b"origin saw" in await _exchange(path, request)
    assert asker.asked == ["localhost", "127.0.0.1"]
    data = json.loads(settings.read_text())
    assert data["model"] == "x"
    assert data["sandbox"]["network"]["allowedDomains"] == ["a.org", "localhost"]
    assert "settings.local.json" in (settings.parent / ".gitignore").read_text()


async def test_headless_denies_unless_allowed_and_deny_patterns_win(
    sock_dir: Path, origin: int
) -> None:
    path = sock_dir / "proxy.sock"
    gate = DomainGate(["*.localhost", "localhost"], ["evil.localhost"])
    async with DomainProxy(gate, path):
        ok = await _exchange(path, f"GET http://localhost:{origin}/ HTTP/1.1\r\n\r\n".encode())
        assert b"origin saw" in ok
        for host in ("evil.localhost", "EVIL.localhost.", "example.com"):
            answer = await _exchange(path, f"GET http://{host}:{origin}/ HTTP/1.1\r\n\r\n".encode())
            assert b"403" in answer and b"not an allowed domain" in answer
    assert not path.exists()


async def test_the_socket_is_private(sock_dir: Path) -> None:
    async with DomainProxy(_gate(), sock_dir / "proxy.sock") as proxy:
        assert proxy.socket_path.stat().st_mode & 0o777 == 0o600


def test_relay_command_refuses_paths_socat_would_misread() -> None:
    socat, *args = relay_command(3128, Path("/run/peri/proxy.sock"))
    assert Path(socat).name == "socat"  # (its full path where it is installed)
    assert args == [
        "TCP-LISTEN:3128,fork,reuseaddr,bind=127.0.0.1",
        "UNIX-CONNECT:/run/peri/proxy.sock",
    ]
    for bad in ("/tmp/a,b.sock", "/tmp/a:b", "/tmp/a b"):
        with pytest.raises(ValueError):
            relay_command(3128, Path(bad))
    with pytest.raises(ValueError):
        relay_command(0, Path("/tmp/p.sock"))
