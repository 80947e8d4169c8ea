"""JSON-RPC 2.0 lines on stdin/stdout for the `acp` connection, strict where the SDK's stock
transport is lenient: that one skips a line that is not JSON silently and dies on a JSON line
that is not an object. Here a bad line is answered (-32700 parse error, -32600 invalid request,
id null when none can be read) and the next line is served."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from typing import IO, Any

log = logging.getLogger("peri.acp")

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def check_message(message: Any) -> dict[str, Any] | None:
    """The JSON-RPC error that answers `message`, or None when the connection may take it."""
    if not isinstance(message, dict):
        return _error(INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
    request_id = message.get("id")
    if not _valid_id(request_id):
        return _error(INVALID_REQUEST, "Invalid Request: id must be a string, number or null")
    if "method" in message:
        if not isinstance(message["method"], str):
            return _error(INVALID_REQUEST, "Invalid Request: method must be a string", request_id)
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return _error(-32602, "Invalid params: must be an object", request_id)
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to one of our requests
    return _error(INVALID_REQUEST, "Invalid Request: neither a request nor a response", request_id)


class LineTransport:
    """The `acp` Transport (send / receive / close) over a byte stream in and one out.

    stdin is read by a thread: it works the same for a pipe, a file and a terminal, and a
    blocked read never holds the event loop."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader, self._writer = reader, writer
        self._lines: asyncio.Queue[bytes] = asyncio.Queue()
        self._write_lock = threading.Lock()
        self._closed = False
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, args=(loop,), daemon=True).start()

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            for line in iter(self._reader.readline, b""):
                loop.call_soon_threadsafe(self._lines.put_nowait, line)
        except (OSError, ValueError):
            log.exception("reading stdin failed")
        finally:
            # (a closed loop raises: nobody waits for the end then)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._lines.put_nowait, b"")

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with self._write_lock:  # one whole line at a time, whoever sends
            if self._closed:
                raise ConnectionError("the transport is closed")
            self._writer.write(data)
            self._writer.flush()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._lines.get()
            if not line:
                return None
            text = line.strip()
            if not text:
                continue
            try:
                message = json.loads(text)
            except (ValueError, RecursionError):
                await self._answer(_error(PARSE_ERROR, "Parse error"))
                continue
            if (problem := check_message(message)) is not None:
                await self._answer(problem)
                continue
            return dict(message)

    async def _answer(self, error: dict[str, Any]) -> None:
        log.warning("answered a malformed message: %s", error["error"]["message"])
        try:
            await self.send(error)
        except (OSError, ConnectionError):
            log.exception("could not answer a malformed message")

    async def close(self) -> None:
        with self._write_lock:
            self._closed = True
