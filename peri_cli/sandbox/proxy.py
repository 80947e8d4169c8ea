"""The sandbox's domain proxy: HTTP (CONNECT and absolute-form) and SOCKS5 (CONNECT) on one Unix
socket, which the sandbox reaches through its relay. A connection goes on only to a domain the
gate admits, judged by the name the client asked for; names resolve here, on the host.

Every wait is bounded (the request head's size and time, the connect, the question), and a
connection that fails in any way is closed alone: the server keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from peri_cli.permissions.hosts import canonical_host
from peri_cli.sandbox import httphead, socks5
from peri_cli.sandbox.gate import DomainGate

HEAD_TIMEOUT = 10.0  # for a client to say where it wants to go
CONNECT_TIMEOUT = 10.0
LINGER = 5.0  # how long a client may keep sending once the origin has finished
MAX_CLIENTS = 256
CHUNK = 64 * 1024
_log = logging.getLogger("peri.sandbox.proxy")


class _Refused(Exception):
    """Answered already (or not answerable): close the connection."""


class DomainProxy:
    """`async with DomainProxy(gate, path):` serves at `path` (mode 0600) until the block ends."""

    def __init__(
        self,
        gate: DomainGate,
        socket_path: Path,
        *,
        head_timeout: float = HEAD_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self.gate = gate
        self.socket_path = socket_path
        self.head_timeout = head_timeout
        self.connect_timeout = connect_timeout
        self.max_clients = max_clients
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.Task[None]] = set()

    async def start(self, sock: socket.socket | None = None) -> None:
        """Serve at `socket_path`, or on `sock`: a socket already listening there (`listen`)."""
        sock = sock or listen(self.socket_path)
        self._server = await asyncio.start_unix_server(
            self._accept, sock=sock, limit=httphead.MAX_HEAD
        )

    def shut(self) -> None:
        """Stop serving and cancel the connections (on the proxy's loop; `close` awaits them)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._clients):
            task.cancel()
        self.socket_path.unlink(missing_ok=True)

    async def close(self) -> None:
        self.shut()
        await asyncio.gather(*self._clients, return_exceptions=True)

    async def __aenter__(self) -> DomainProxy:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is None or len(self._clients) >= self.max_clients:
            writer.close()
            return
        self._clients.add(task)
        try:
            await self._serve(reader, writer)
        except (_Refused, OSError, asyncio.IncompleteReadError, TimeoutError):
            pass  # this connection only
        except asyncio.CancelledError:
            pass  # the proxy is closing; the stream's callback must not see a cancelled task
        except Exception:  # never the server: log it and close this one
            _log.exception("the sandbox proxy dropped a connection")
        finally:
            self._clients.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(self.head_timeout):
            first = await reader.readexactly(1)
            socks = first == bytes([socks5.VERSION])
            target = await (_socks_target if socks else _http_target)(first, reader, writer)
        if not await self.gate.admit(target.host):
            await _refuse(writer, socks, 403, f"{target.host} is not an allowed domain")
        host = canonical_host(target.host)  # connect to exactly what was judged
        try:
            async with asyncio.timeout(self.connect_timeout):
                upstream_reader, upstream = await asyncio.open_connection(host, target.port)
        except (OSError, TimeoutError) as e:
            await _refuse(writer, socks, 502, f"cannot connect to {target.host}:{target.port}: {e}")
        try:
            if socks:
                socks5.reply(writer, socks5.SUCCEEDED)
            elif target.tunnel:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                upstream.write(target.head)
            await _relay(reader, writer, upstream_reader, upstream)
        finally:
            upstream.close()


def listen(path: Path) -> socket.socket:
    """A Unix socket listening at `path` (mode 0600: only this user's processes may connect),
    replacing a socket a killed proxy left there."""
    path.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
        sock.listen(MAX_CLIENTS)
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    sock.setblocking(False)
    return sock


async def _socks_target(
    first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> httphead.Request:
    try:
        target = await socks5.read_request(reader, writer)
    except socks5.Refused as e:
        await writer.drain()
        raise _Refused(str(e)) from e
    except ValueError as e:
        raise _Refused(str(e)) from e
    return httphead.Request(target.host, target.port, tunnel=True)


async def _http_target(
    first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> httphead.Request:
    try:
        return await httphead.read_request(first, reader)
    except httphead.BadRequest as e:
        await _refuse(writer, False, e.status, str(e))


async def _refuse(writer: asyncio.StreamWriter, socks: bool, status: int, message: str) -> NoReturn:
    """Answer the client with an error and end the connection (raises _Refused)."""
    if socks:
        code = socks5.NOT_ALLOWED if status == 403 else socks5.HOST_UNREACHABLE
        socks5.reply(writer, code)
    else:
        writer.write(httphead.response(status, message))
    with contextlib.suppress(OSError):
        await writer.drain()
    raise _Refused(message)


async def _relay(
    client_reader: asyncio.StreamReader,
    client: asyncio.StreamWriter,
    origin_reader: asyncio.StreamReader,
    origin: asyncio.StreamWriter,
) -> None:
    """Bytes both ways until the origin is done; the client's half then gets LINGER seconds
    (a client that half-closes first still receives the whole answer)."""
    up = asyncio.create_task(_pipe(client_reader, origin))
    down = asyncio.create_task(_pipe(origin_reader, client))
    try:
        await down
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(up), LINGER)
    finally:
        up.cancel()
        down.cancel()
        await asyncio.gather(up, down, return_exceptions=True)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()  # the other side sees the end, and may still answer
    except OSError:
        pass  # a reset on either side ends this direction
