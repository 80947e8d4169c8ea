"""The HTTP side of the proxy: reads one request head, CONNECT host:port or an absolute-form
http:// request, and rewrites the latter for the origin server. Header lines are parsed by the
standard library (`http.client.parse_headers`); nothing past the head is read here."""

from __future__ import annotations

import asyncio
import http.client
import io
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024
_REQUEST_LINE = re.compile(r"([A-Za-z]{1,20}) (\S{1,8000}) (HTTP/1\.[01])")
# Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never sent on to the origin
_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)


class BadRequest(Exception):
    """A head the proxy will not serve; `status` and the message go back to the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Request:
    host: str
    port: int
    tunnel: bool  # CONNECT: answer 200 and relay bytes; otherwise send `head` to the origin
    head: bytes = b""


async def read_request(first: bytes, reader: asyncio.StreamReader) -> Request:
    """The request whose head starts with `first` (already read); BadRequest otherwise."""
    try:
        raw = first + await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError as e:
        raise BadRequest(431, f"the request head is larger than {MAX_HEAD} bytes") from e
    except asyncio.IncompleteReadError as e:
        raise BadRequest(400, "the request ended before its head did") from e
    line, _, rest = raw.partition(b"\r\n")
    match = _REQUEST_LINE.fullmatch(line.decode("latin-1"))
    if match is None:
        raise BadRequest(400, "not an HTTP/1.x request line")
    method, target, version = match.groups()
    try:
        headers = http.client.parse_headers(io.BytesIO(rest))
    except http.client.HTTPException as e:
        raise BadRequest(431, f"unreadable headers ({type(e).__name__})") from e
    if method.upper() == "CONNECT":
        host, port = _authority(target, None)
        return Request(host, port, tunnel=True)
    return _forwarded(method, target, version, headers)


def _authority(authority: str, default_port: int | None) -> tuple[str, int]:
    try:
        parts = urlsplit("//" + authority)
        port = parts.port or default_port
    except ValueError as e:
        raise BadRequest(400, f"not a host and port: {authority[:200]!r}") from e
    if not parts.hostname or port is None or parts.username is not None:
        raise BadRequest(400, f"not a host and port: {authority[:200]!r}")
    return parts.hostname, port


def _forwarded(method: str, target: str, version: str, headers: http.client.HTTPMessage) -> Request:
    """An absolute-form request rewritten for the origin: origin-form target, Host from the URL,
    hop-by-hop headers dropped and `Connection: close`, so one response ends the relay."""
    if not target.lower().startswith("http://"):
        raise BadRequest(
            400, "this proxy takes CONNECT and absolute http:// requests (use CONNECT for https)"
        )
    parts = urlsplit(target)
    host, port = _authority(parts.netloc, 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    named = {n.strip().lower() for v in headers.get_all("Connection", []) for n in v.split(",")}
    lines = [f"{method} {path} {version}", f"Host: {parts.netloc.rpartition('@')[2]}"]
    for key, value in headers.items():
        if key.lower() not in _HOP | named | {"host"}:
            lines.append(f"{key}: {' '.join(value.split())}")  # folded lines unfolded
    lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
    return Request(host, port, tunnel=False, head=head)


def response(status: int, message: str) -> bytes:
    """A complete error response, closing the connection; the body says it came from Peri."""
    reason = http.client.responses.get(status, "Error")
    body = f"Peri's sandbox proxy: {message}\n".encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nX-Peri-Sandbox: refused\r\n\r\n"
    ).encode("latin-1") + body
