"""JSON-RPC 2.0 lines on stdin/stdout for the `acp` connection, strict where the SDK's stock
transport is lenient: that one skips a line that is not JSON silently and dies on a JSON line
that is not an object. Here a bad line is answered (-32700 parse error, -32600 invalid request,
id null when none can be read) and the next line is served."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from typing import IO, Any

log = logging.getLogger("peri.acp")

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
READ_SIZE = 1 << 16
REASON_CAP = 500


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


def with_reason(error: dict[str, Any]) -> dict[str, Any]:
    """The error with `data.reason`: one line an editor can show a person, from the message
    and whatever the data says (a pydantic error list, `details`, the field at fault)."""
    data = error.get("data")
    if isinstance(data, dict) and isinstance(data.get("reason"), str):
        return error
    detail = _detail(data)
    message = str(error.get("message") or "Error")
    line = " ".join((f"{message}: {detail}" if detail else message).split())  # one line
    line = line if len(line) <= REASON_CAP else line[: REASON_CAP - 1] + "…"
    kept = dict(data) if isinstance(data, dict) else ({} if data is None else {"details": data})
    return {**error, "data": {**kept, "reason": line}}


def _detail(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if not isinstance(data, dict):
        return json.dumps(data, ensure_ascii=False, default=str)
    errors = data.get("errors")
    if isinstance(errors, list) and errors:
        return "; ".join(one_error(e) for e in errors[:3])
    if isinstance(details := data.get("details"), str):
        return details
    return "; ".join(f"{k}: {v}" for k, v in data.items())


def one_error(error: Any) -> str:
    """A pydantic error (`{"loc": [...], "msg": ...}`) as `field: what is wrong`."""
    if not isinstance(error, dict):
        return str(error)
    where = ".".join(str(part) for part in error.get("loc") or ())
    what = str(error.get("msg") or "invalid")
    return f"{where}: {what}" if where else what


def _lines_of(reader: IO[bytes]) -> Iterator[bytes]:
    """The stream's lines, read from its descriptor when it has one: a thread blocked in
    `os.read` holds no lock of the buffered reader, so the process can exit while it waits
    (a signal ends `peri acp` with the editor still connected)."""
    try:
        fd = reader.fileno()
    except (OSError, ValueError, AttributeError):
        yield from iter(reader.readline, b"")
        return
    parts: list[bytes] = []  # the line read so far (a long one comes in many chunks)
    while chunk := os.read(fd, READ_SIZE):
        if b"\n" not in chunk:
            parts.append(chunk)
            continue
        *lines, rest = chunk.split(b"\n")
        lines[0] = b"".join([*parts, lines[0]])
        for line in lines:
            yield line + b"\n"
        parts = [rest] if rest else []
    if parts:
        yield b"".join(parts)


class LineTransport:
    """The `acp` Transport (send / receive / close) over a byte stream in and one out.

    stdin is read by a thread: it works the same for a pipe, a file and a terminal, and a
    blocked read never holds the event loop."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader, self._writer = reader, writer
        self._lines: asyncio.Queue[bytes] = asyncio.Queue()
        self._write_lock = threading.Lock()
        self._closed = False
        self._open: set[Any] = set()  # ids of the editor's requests not answered yet
        self._answered = asyncio.Event()  # set each time one is answered
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, args=(loop,), daemon=True).start()

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            for line in _lines_of(self._reader):
                loop.call_soon_threadsafe(self._lines.put_nowait, line)
        except (OSError, ValueError):
            log.exception("reading stdin failed")
        finally:
            # (a closed loop raises: nobody waits for the end then)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._lines.put_nowait, b"")

    async def send(self, message: dict[str, Any]) -> None:
        if "method" not in message and message.get("id") in self._open:
            self._open.discard(message["id"])
            self._answered.set()
        if isinstance(error := message.get("error"), dict):
            message = {**message, "error": with_reason(error)}
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
            if "method" in message and message.get("id") is not None:
                self._open.add(message["id"])
            return dict(message)

    async def _answer(self, error: dict[str, Any]) -> None:
        log.warning("answered a malformed message: %s", error["error"]["message"])
        try:
            await self.send(error)
        except (OSError, ConnectionError):
            log.exception("could not answer a malformed message")

    def end(self) -> None:
        """Read no more: `receive` answers None, as when stdin ends (a signal stops Peri)."""
        self._lines.put_nowait(b"")

    async def answered(self, timeout: float) -> bool:
        """Until every request read so far has been answered (True), or `timeout` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._open:
            self._answered.clear()
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), left)
        return True

    async def close(self) -> None:
        with self._write_lock:
            self._closed = True
