"""WebFetch (deferred): an http(s) URL as Markdown, with a size cap and a total deadline; a redirect
to another origin (host, port or scheme) is returned to the model, not followed."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.client
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from email.message import Message as HeaderMessage
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, Field

from peri_cli.base.tool import (
    NOTHING,
    PydanticTool,
    ToolContext,
    ToolError,
    ToolKind,
    ToolOutput,
    ToolTraits,
    Writes,
)
from peri_cli.permissions.call_facts import url_domain
from peri_cli.permissions.hosts import canonical_host, is_loopback
from peri_cli.tools.webdecode import UndecodableBody, decode_body

DEFAULT_CHARS = 50_000
MAX_CHARS = 200_000
MAX_BYTES = 5 * 1024 * 1024
MAX_SAME_HOST_REDIRECTS = 5
TIMEOUT_SECONDS = 30.0  # for one connect or one read; it bounds what cutting cannot reach
DEADLINE_SECONDS = 30.0  # for the whole fetch: a server dripping bytes cannot hold it longer
CHUNK_BYTES = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}
USER_AGENT = "Peri-WebFetch/1 (+a terminal coding agent)"
_HEADERS = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}  # what webdecode undoes
_TEXT_TYPES = re.compile(
    r"^(text/|application/(json|xml|xhtml\+xml|javascript|[\w.+-]+\+(json|xml)))"
)


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class WebFetchParams(BaseModel):
    url: str = Field(description="The http:// or https:// URL to fetch.")
    max_chars: int = Field(
        default=DEFAULT_CHARS,
        ge=1,
        le=MAX_CHARS,
        description=f"At most this many characters of the result (default {DEFAULT_CHARS}).",
    )


class WebFetchTool(PydanticTool[WebFetchParams]):
    name = "WebFetch"
    kind: ToolKind = "external"
    params = WebFetchParams
    traits = ToolTraits(editor_kind="fetch", deferred=True)  # found through SearchExtraTools

    def __init__(self, *, deadline: float = DEADLINE_SECONDS) -> None:
        """`deadline`: seconds the whole fetch may take (redirects included) before it fails."""
        self._deadline = deadline

    def description(self) -> str:
        return _description()

    def validate(self, raw: dict[str, Any]) -> WebFetchParams:
        params = super().validate(raw)
        if url_domain(params.url) is None:
            raise ToolError(
                f"WebFetch takes an http:// or https:// URL with a host, not {params.url[:200]!r}."
            )
        return params

    def writes(self, params: WebFetchParams, ctx: ToolContext) -> Writes:
        return NOTHING

    def subject(self, params: WebFetchParams) -> str | None:
        host = url_domain(params.url)  # `WebFetch(domain:HOST)` rules
        return None if host is None else f"domain:{host}"

    async def call(self, params: WebFetchParams, ctx: ToolContext) -> ToolOutput:
        line = _Line()
        work = asyncio.to_thread(fetch, params.url, params.max_chars, line)
        try:
            return await asyncio.wait_for(work, self._deadline)
        except TimeoutError:
            return ToolOutput.error(
                f"{params.url} took longer than {self._deadline:g} s to load, so WebFetch gave "
                "up. The server may be slow or sending very little; try again later or another URL."
            )
        finally:
            # Past the deadline or cancelled (Ctrl+C), the thread must not read on: quitting
            # Peri waits for it. Cutting its sockets ends a read blocked in the kernel at once.
            line.cut()


class _Line:
    """The connections of one fetch, for another thread to cut: shutting a socket down makes a
    recv() blocked on it return, where closing it would leave the reader waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._cut = False

    @property
    def is_cut(self) -> bool:
        return self._cut

    def watch(self, sock: socket.socket) -> None:
        # A duplicate: TLS takes the original's descriptor over, and shutting any descriptor of
        # a connection down ends it for all of them.
        copy = sock.dup()
        with self._lock:
            if not self._cut:
                self._socks.append(copy)
                return
        _shut(copy)  # cut while connecting: the read that follows fails at once

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            socks, self._socks = self._socks, []
        for sock in socks:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the server or by the response
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


class _WatchedHTTP(urllib.request.HTTPHandler):
    def __init__(self, line: _Line) -> None:
        super().__init__()
        self._line = line

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> http.client.HTTPResponse:
        return super().do_open(_watched(http_class, self._line), req, **kwargs)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, line: _Line) -> None:
        super().__init__()
        self._line = line

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> http.client.HTTPResponse:
        return super().do_open(_watched(http_class, self._line), req, **kwargs)


def _watched(http_class: Any, line: _Line) -> Callable[..., http.client.HTTPConnection]:
    """`http_class`, whose connections tell `line` their socket as soon as it exists."""

    def connection(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection = http_class(*args, **kwargs)
        create = conn._create_connection  # type: ignore[attr-defined]

        def create_and_watch(*a: Any, **kw: Any) -> socket.socket:
            sock: socket.socket = create(*a, **kw)
            line.watch(sock)
            return sock

        conn._create_connection = create_and_watch  # type: ignore[attr-defined]
        return conn

    return connection


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx reaches the caller as an HTTPError, to be judged there


def _opener(host: str, line: _Line) -> urllib.request.OpenerDirector:
    handlers: list[Any] = [_NoRedirects(), _WatchedHTTP(line), _WatchedHTTPS(line)]
    if is_loopback(host):
        handlers.append(urllib.request.ProxyHandler({}))  # never send loopback to a proxy
    return urllib.request.build_opener(*handlers)


def fetch(url: str, max_chars: int = DEFAULT_CHARS, line: _Line | None = None) -> ToolOutput:
    """The page at `url` as Markdown text, or an error the model can act on; blocking. Cutting
    `line` from another thread stops it."""
    line = line or _Line()
    try:
        return _follow(url, max_chars, line)
    finally:
        line.cut()  # closes the sockets' duplicates


def _follow(url: str, max_chars: int, line: _Line) -> ToolOutput:
    current = url
    for _ in range(MAX_SAME_HOST_REDIRECTS + 1):
        request = urllib.request.Request(current, headers=_HEADERS)
        try:
            with _opener(url_domain(current) or "", line).open(
                request, timeout=TIMEOUT_SECONDS
            ) as response:
                body = _read(response, line)
                if line.is_cut:
                    return ToolOutput.error(f"The fetch of {current} was stopped.")
                return _render(current, response.headers, body, max_chars)
        except urllib.error.HTTPError as e:
            location = e.headers.get("Location") if 300 <= e.code < 400 else None
            if location is None:
                return ToolOutput.error(f"{current} answered HTTP {e.code} {e.reason}.")
            target = urljoin(current, location)
            if _origin(target) != _origin(current):
                return ToolOutput.text(
                    f"{current} redirects (HTTP {e.code}) to another location: {target}\n"
                    "It was not followed. Fetch that URL with WebFetch if it is what you want."
                )
            current = target
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            return ToolOutput.error(f"Could not fetch {current}: {reason}.")
    return ToolOutput.error(f"{url} redirected more than {MAX_SAME_HOST_REDIRECTS} times.")


def _read(response: http.client.HTTPResponse, line: _Line) -> bytes:
    """The body, up to one byte past MAX_BYTES, in chunks of what has arrived (read1), so a cut
    line is seen between them."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_BYTES and not line.is_cut:
        chunk = response.read1(min(CHUNK_BYTES, MAX_BYTES + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """Scheme, host and port: a redirect is followed only within one origin (None: a URL
    whose port is not a number)."""
    parts = urlsplit(url)
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    return parts.scheme, canonical_host(parts.hostname or ""), port


def _render(url: str, headers: HeaderMessage, body: bytes, max_chars: int) -> ToolOutput:
    kind = (headers.get_content_type() or "").lower()
    if not _TEXT_TYPES.match(kind):
        return ToolOutput.error(
            f"{url} is {kind or 'of an unknown type'}, not text; WebFetch returns only text "
            "(download it with Bash if you need the file)."
        )
    raw_size = len(body)
    try:
        body = decode_body(headers.get("Content-Encoding"), body, MAX_BYTES)
    except UndecodableBody as e:
        return ToolOutput.error(f"Could not read {url}: {e}.")
    charset = headers.get_content_charset() or "utf-8"
    try:
        text = body[:MAX_BYTES].decode(charset, errors="replace")
    except LookupError:
        text = body[:MAX_BYTES].decode("utf-8", errors="replace")
    if kind in ("text/html", "application/xhtml+xml"):
        text = _markdown(text)
    notes = []
    if max(raw_size, len(body)) > MAX_BYTES:
        notes.append(f"the page is larger than {MAX_BYTES // 2**20} MB; only its start was read")
    if len(text) > max_chars:
        notes.append(f"cut at {max_chars:,} of {len(text):,} characters")
        text = text[:max_chars]
    note = f"\n\n[WebFetch: {'; '.join(notes)}]" if notes else ""
    return ToolOutput.text(f"Content of {url} ({kind}):\n\n{text.strip()}{note}")


_DROPPED = ["script", "style", "noscript", "template", "svg", "iframe", "head"]


def _markdown(html: str) -> str:
    # imported on first use: markdownify brings BeautifulSoup
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(_DROPPED):
        tag.decompose()
    text: str = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", text)
