"""WebFetch against a real local HTTP server: Markdown, caps, redirects, refusals, permissions."""

from __future__ import annotations

import asyncio
import gzip
import select
import sys
import threading
import time
import traceback
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from peri_cli.base.tool import ToolContext, ToolError
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.permissions.rule_syntax import RuleError, RuleSource, parse_rule
from peri_cli.tools import webfetch
from peri_cli.tools.webfetch import WebFetchTool
from tests.permissions.calls import decide_for, suggestions_for

PAGE = (
    "<html><head><title>t</title><script>alert('x')</script><style>p{}</style></head>"
    "<body><h1>Peri docs</h1><p>Read the <a href='/guide'>guide</a>.</p>"
    "<ul><li>one</li><li>two</li></ul></body></html>"
)


DRIP_BYTES = 50  # one every 0.2 s: the server gives up after 10 s even if the client never does
closed = threading.Event()  # the drip server saw the client close its connection


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _drip(self) -> None:
        """Headers at once, then the body one byte every 0.2 s, each read well inside any
        per-read timeout; stops when the client closes the connection."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(DRIP_BYTES))
        self.end_headers()
        self.wfile.flush()
        for _ in range(DRIP_BYTES):
            readable, _, _ = select.select([self.connection], [], [], 0.2)
            if readable and not self.connection.recv(1):
                closed.set()
                return
            self.wfile.write(b"x")
            self.wfile.flush()

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path == "/drip":
            return self._drip()
        if self.path.startswith("/to-port/"):  # the same host, another port
            target = f"http://127.0.0.1:{self.path.removeprefix('/to-port/')}/page"
            return self._send(302, b"", "text/plain", Location=target)
        routes = {
            "/page": (200, PAGE.encode(), "text/html; charset=utf-8", {}),
            "/big": (200, b"x" * 100_000, "text/plain", {}),
            "/json": (200, b'{"a": 1}', "application/json", {}),
            "/png": (200, b"\x89PNG\r\n\x1a\n....", "image/png", {}),
            "/moved": (301, b"", "text/plain", {"Location": "/page"}),
            "/away": (302, b"", "text/plain", {"Location": f"http://localhost:{port}/page"}),
            **_encoded_routes(self.headers.get("Accept-Encoding", "")),
        }
        status, body, kind, headers = routes.get(self.path, (404, b"no", "text/plain", {}))
        self._send(status, body, kind, **headers)


def _deflate(data: bytes, wbits: int) -> bytes:
    engine = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return engine.compress(data) + engine.flush()


def _encoded_routes(accepted: str) -> dict[str, tuple[int, bytes, str, dict[str, str]]]:
    """Compressed bodies, each answered only to a client that said it takes the coding."""
    html = "text/html; charset=utf-8"
    pages = {
        "/gzip": (gzip.compress(PAGE.encode()), "gzip"),
        "/deflate": (zlib.compress(PAGE.encode()), "deflate"),
        "/raw-deflate": (_deflate(PAGE.encode(), -zlib.MAX_WBITS), "deflate"),
        "/br": (b"\x1b\x03\x00\xf8\x25\x00", "br"),
        "/bomb": (gzip.compress(b"a" * (64 * 2**20)), "gzip"),  # 64 MB from about 64 kB
        "/bad-gzip": (b"\x1f\x8bnot really gzip", "gzip"),
    }
    routes = {}
    for path, (body, coding) in pages.items():
        kind = "text/plain" if path == "/bomb" else html
        routes[path] = (200, body, kind, {"Content-Encoding": coding})
    routes["/accepted"] = (200, accepted.encode(), "text/plain", {})
    return routes


@pytest.fixture
def server() -> Iterator[str]:
    yield from _serve()


@pytest.fixture
def other_server() -> Iterator[str]:
    yield from _serve()


def _serve() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


async def _fetch(
    ctx: ToolContext, url: str, tool: WebFetchTool | None = None, **more: object
) -> tuple[str, bool]:
    tool = tool or WebFetchTool()
    output = await tool.call(tool.validate({"url": url, **more}), ctx)
    return "".join(p.text for p in output.content), output.is_error  # type: ignore[union-attr]


async def test_html_becomes_markdown_without_scripts(ctx: ToolContext, server: str) -> None:
    text, is_error = await _fetch(ctx, f"{server}/page")
    assert not is_error
    assert "# Peri docs" in text and "[guide](/guide)" in text and "* one" in text
    assert "alert" not in text and "p{}" not in text


async def test_size_cap_and_text_types(ctx: ToolContext, server: str) -> None:
    text, _ = await _fetch(ctx, f"{server}/big", max_chars=1000)
    assert "cut at 1,000 of 100,000 characters" in text and text.count("x") < 1100
    text, is_error = await _fetch(ctx, f"{server}/json")
    assert not is_error and '{"a": 1}' in text
    text, is_error = await _fetch(ctx, f"{server}/png")
    assert is_error and "image/png, not text" in text
    text, is_error = await _fetch(ctx, f"{server}/nothing")
    assert is_error and "HTTP 404" in text


async def test_gzip_and_deflate_bodies_are_decoded(ctx: ToolContext, server: str) -> None:
    text, is_error = await _fetch(ctx, f"{server}/accepted")
    assert not is_error and "gzip, deflate" in text
    for path in ("/gzip", "/deflate", "/raw-deflate"):
        text, is_error = await _fetch(ctx, server + path)
        assert not is_error, text
        assert "# Peri docs" in text and "[guide](/guide)" in text and "\x1f" not in text


async def test_an_encoding_it_cannot_decode_is_refused(ctx: ToolContext, server: str) -> None:
    text, is_error = await _fetch(ctx, f"{server}/br")
    assert is_error and "br-encoded, which WebFetch cannot decode" in text
    text, is_error = await _fetch(ctx, f"{server}/bad-gzip")
    assert is_error and "not valid gzip data" in text


async def test_a_compressed_bomb_stops_at_the_size_cap(ctx: ToolContext, server: str) -> None:
    text, is_error = await _fetch(ctx, f"{server}/bomb", max_chars=100)
    assert not is_error
    assert "larger than 5 MB" in text and "cut at 100 of 5,242,880 characters" in text


async def test_redirects_same_host_followed_other_host_returned(
    ctx: ToolContext, server: str
) -> None:
    text, is_error = await _fetch(ctx, f"{server}/moved")
    assert not is_error and "# Peri docs" in text
    text, is_error = await _fetch(ctx, f"{server}/away")
    assert not is_error
    assert "redirects (HTTP 302) to another location: http://localhost:" in text
    assert "Peri docs" not in text and "not followed" in text


async def test_another_port_is_another_origin(
    ctx: ToolContext, server: str, other_server: str
) -> None:
    other_port = other_server.rpartition(":")[2]
    text, is_error = await _fetch(ctx, f"{server}/to-port/{other_port}")
    assert not is_error
    assert f"to another location: http://127.0.0.1:{other_port}/page" in text
    assert "Peri docs" not in text and "not followed" in text


async def test_a_slow_page_stops_at_the_total_deadline(ctx: ToolContext, server: str) -> None:
    # every byte comes well inside a per-read timeout; only a total deadline ends the fetch
    started = time.monotonic()
    text, is_error = await _fetch(ctx, f"{server}/drip", WebFetchTool(deadline=1.0))
    assert is_error and "took longer than 1 s" in text
    assert time.monotonic() - started < 2.0


def _threads_in_webfetch() -> list[str]:
    """The threads whose stack is inside WebFetch's code, by name."""
    names = {t.ident: t.name for t in threading.enumerate()}
    return [
        names.get(ident, str(ident))
        for ident, frame in sys._current_frames().items()
        if any(f.filename == webfetch.__file__ for f in traceback.extract_stack(frame))
    ]


async def test_a_cancelled_fetch_stops_reading(ctx: ToolContext, server: str) -> None:
    closed.clear()
    task = asyncio.create_task(_fetch(ctx, f"{server}/drip"))
    await asyncio.sleep(0.5)  # the body is coming, a byte at a time
    assert _threads_in_webfetch()
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 1.0
    # the reading thread ends and the connection is closed, not left to drip on
    assert await asyncio.to_thread(closed.wait, 1.0)
    for _ in range(20):
        if not _threads_in_webfetch():
            break
        await asyncio.sleep(0.05)
    assert _threads_in_webfetch() == []


def test_only_http_and_https_urls() -> None:
    tool = WebFetchTool()
    for url in ("file:///etc/passwd", "ftp://x.org/a", "javascript:alert(1)", "http://"):
        with pytest.raises(ToolError, match="http:// or https://"):
            tool.validate({"url": url})


async def test_a_refused_connection_is_an_error_result(ctx: ToolContext) -> None:
    text, is_error = await _fetch(ctx, "http://127.0.0.1:9/")
    assert is_error and "Could not fetch" in text


def test_permission_is_asked_per_domain(tmp_path: Path, server: str) -> None:
    policy = PermissionPolicy(mode="default", workspace=tmp_path, trusted=True, home=tmp_path)
    url = {"url": f"{server}/page"}
    assert decide_for(policy, "WebFetch", url).action == "ask"
    offers = suggestions_for(policy, "WebFetch", url)
    assert offers == ["WebFetch(domain:127.0.0.1)"]
    policy.allow_for_session(offers)
    assert decide_for(policy, "WebFetch", url).action == "allow"
    other = {"url": "https://example.com/"}
    assert decide_for(policy, "WebFetch", other).action == "ask"
    policy.rules.add(parse_rule("WebFetch(domain:example.com)", "deny", RuleSource("user")))
    assert decide_for(policy, "WebFetch", other).action == "deny"
    with pytest.raises(RuleError, match="domain:HOST"):
        parse_rule("WebFetch(example.com)", "allow", RuleSource("user"))


def test_webfetch_is_registered_deferred(tmp_path: Path) -> None:
    from tests.tui.harness import make_runtime

    runtime = make_runtime(tmp_path)
    assert runtime.agent is not None
    assert "WebFetch" in runtime.agent.tools.deferred
    assert "WebFetch" not in runtime.agent.tools.direct
