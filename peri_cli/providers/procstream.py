"""A provider whose streams are read and parsed in a worker process (`worker`): the TUI's, and
`peri -p`'s when it started one first thing (`prestart`).

The UI's process only decodes one small JSON line per stream and frame: the deltas the worker
batched (`-p` asks for them unbatched: every delta as the server sent it). Closing a stream
(a stop, Ctrl+C) tells the worker to cancel it, which closes the HTTP response there; a worker
that dies fails its open streams as dropped connections (retried like any other), and the next
stream starts a new worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator
from typing import IO, Any

from peri_cli.base.provider import ModelRequest, Provider, StreamEvent, StreamInterrupted
from peri_cli.providers import prestart
from peri_cli.providers.batching import Inbox, StreamEnd
from peri_cli.providers.common import scrub
from peri_cli.providers.wire import dump_request, load_item

WORKER_KINDS = ("anthropic", "openai")


def stream_provider(
    name: str, *, api_key: str | None, base_url: str | None, interactive: bool
) -> Provider:
    """The TUI's provider: an SDK's in a worker process, batched per frame. Otherwise the one a
    face started first (`prestart`), unbatched, and for that face's later sessions a worker of
    their own; failing that (the SDK in a program, tests), the SDK in this process."""
    if name in WORKER_KINDS:
        if interactive:
            return ProcessProvider(name, api_key=api_key, base_url=base_url)
        if (waiting := prestart.take(name)) is not None:
            return ProcessProvider(name, api_key=api_key, base_url=base_url, waiting=waiting)
        if prestart.used_workers(name):
            return ProcessProvider(name, api_key=api_key, base_url=base_url, batched=False)
    from peri_cli.providers.factory import make_provider

    return make_provider(name, api_key=api_key, base_url=base_url)


class ProcessProvider:
    """Streams and model lists through one worker process, started on first use. A thread
    reads the worker's lines (blocking reads, no event loop of its own to outlive)."""

    def __init__(
        self,
        name: str,
        *,
        api_key: str | None,
        base_url: str | None,
        waiting: tuple[subprocess.Popen[bytes], IO[bytes]] | None = None,
        batched: bool | None = None,
    ) -> None:
        self.name = name
        # The TUI's deltas come joined per frame; a face's that prestarted (`-p`, ACP, `mcp
        # serve`) as they came.
        self.batched = waiting is None if batched is None else batched
        self._key = api_key
        self._config = {
            "provider": name,
            "api_key": api_key,
            "base_url": base_url,
            "batched": self.batched,
        }
        self._proc: subprocess.Popen[bytes] | None = None
        self._waiting = waiting
        self._inboxes: dict[int, tuple[Inbox, subprocess.Popen[bytes]]] = {}  # and its worker
        self._models: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # one worker; one writer at a time
        self._errors: dict[subprocess.Popen[bytes], IO[bytes]] = {}
        self._ended: set[subprocess.Popen[bytes]] = set()  # workers whose reader has finished
        self._streams = threading.Lock()  # a stream's registration vs its worker's end
        self._why_ended = ""

    def _worker(self) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                if self._waiting is not None and self._waiting[0].poll() is not None:
                    prestart.end(*self._waiting)  # it died while loading (killed, out of memory)
                    self._waiting = None
                proc, errors = self._waiting or _spawn()
                self._proc, self._waiting = proc, None
                self._errors[proc] = errors
                threading.Thread(
                    target=self._read, args=(proc,), name="peri-stream-worker", daemon=True
                ).start()
                self._write(proc, self._config)
            return self._proc

    def warm(self) -> None:
        """Start the worker now: it loads its SDK while the user types the first prompt."""
        self._worker()

    def _send(self, data: dict[str, Any]) -> subprocess.Popen[bytes]:
        proc = self._worker()
        self._write(proc, data)
        return proc

    def _write(self, proc: subprocess.Popen[bytes], data: dict[str, Any]) -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError, ValueError):  # gone: its reader reports it
            proc.stdin.write(json.dumps(data).encode() + b"\n")
            proc.stdin.flush()

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                data = json.loads(line)
                if "models" in data:
                    self._answer(data["id"], data["models"])
                elif (stream := self._inboxes.get(data["id"])) is not None:
                    for item in data["items"]:
                        stream[0].put(load_item(item))
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            pass  # a garbled line: the worker is as good as gone
        finally:
            self._gone(proc)

    def _answer(self, request_id: int, models: list[str] | None) -> None:
        loop, future = self._models.pop(request_id, (None, None))
        if loop is not None and future is not None:
            with contextlib.suppress(RuntimeError):  # (its loop has closed)
                loop.call_soon_threadsafe(_settle, future, models)

    def _gone(self, proc: subprocess.Popen[bytes]) -> None:
        """The worker ended or spoke nonsense: its open streams fail as dropped ones."""
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        self._why_ended = f"the stream worker process ended mid-reply{self._why(proc)}"
        with self._streams:  # a stream registered after this sees `_ended` instead
            self._ended.add(proc)
            inboxes = list(self._inboxes.values())
        for inbox, owner in inboxes:
            if owner is proc:
                inbox.put(StreamEnd(StreamInterrupted(self._why_ended)))
        for request_id in list(self._models):
            self._answer(request_id, None)

    def _why(self, proc: subprocess.Popen[bytes]) -> str:
        """The last line the worker wrote to its stderr (a traceback's verdict), if any."""
        err = self._errors.pop(proc, None)
        if err is None:
            return ""
        with err, contextlib.suppress(OSError, ValueError):
            err.seek(max(0, err.seek(0, 2) - 500))
            lines = err.read().decode(errors="replace").strip().splitlines()
            return f" ({scrub(lines[-1][-200:], [self._key])})" if lines else ""
        return ""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The worker's events for `request`, in order and batched; its error is raised here."""
        stream_id = next(self._ids)
        inbox = Inbox(asyncio.get_running_loop(), join=self.batched)
        proc = self._worker()
        with self._streams:  # (before it is asked: its answer may be quick)
            self._inboxes[stream_id] = (inbox, proc)
            if proc in self._ended:  # it ended before this stream was registered
                inbox.put(StreamEnd(StreamInterrupted(self._why_ended)))
        ended = False
        try:
            self._write(proc, {"op": "stream", "id": stream_id, "request": dump_request(request)})
            while True:
                for item in await inbox.take():
                    if isinstance(item, StreamEnd):
                        ended = True
                        if item.error is not None:
                            raise item.error
                        return
                    yield item
        finally:
            del self._inboxes[stream_id]
            if not ended:  # stopped early: so is its reading
                self._write(proc, {"op": "cancel", "id": stream_id})

    async def list_models(self) -> list[str] | None:
        request_id = next(self._ids)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[str] | None] = loop.create_future()
        self._models[request_id] = (loop, future)
        self._send({"op": "models", "id": request_id})
        try:
            models: list[str] | None = await future
            return models
        finally:
            self._models.pop(request_id, None)

    def close(self) -> None:
        """End the worker (it would end anyway once its input closes with this process)."""
        with self._lock:
            proc, self._proc = self._proc, None
            if self._waiting is not None:  # never asked for anything
                proc, errors = self._waiting
                self._errors[proc], self._waiting = errors, None
        if proc is not None:
            prestart.end(proc, self._errors.pop(proc, None))


def _spawn() -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    # the worker's stderr (the TUI owns the terminal): `_why` quotes its last line
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - open for the worker's life
    proc = subprocess.Popen(
        # -P: the workspace (the current directory) is not on its import path, or a repository's
        # `anthropic.py` would run in the process that is handed the API key
        [sys.executable, "-P", "-m", "peri_cli.providers.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        start_new_session=True,  # a terminal's signals are the TUI's to handle
    )
    return proc, errors


def _settle(future: asyncio.Future[Any], value: object) -> None:
    if not future.done():
        future.set_result(value)
