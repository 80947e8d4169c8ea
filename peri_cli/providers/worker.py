"""The stream worker: a child process where the TUI's provider streams are read and parsed
(`python -m peri_cli.providers.worker`, started by `procstream`).

Why a process: the SDKs parse each SSE event with pydantic (~30 µs), so three SubAgents
streaming at full speed keep a core half busy. On the UI's loop that delayed every key press
(p95 239 ms); on a thread of the same process the GIL still did (the UI and the reader hand
the lock back and forth at every socket read and terminal write).

Started with a provider's name and its parent's pid as arguments (`prestart`), it imports that
SDK before it reads anything, and dies with that parent. Protocol, one JSON object a line. In:
first the provider's configuration `{"provider", "api_key", "base_url", "batched"}` (on the
pipe, never in argv), then
`{"op": "stream", "id", "request"}`, `{"op": "cancel", "id"}`, `{"op": "models", "id"}`.
Out: `{"id", "items": [...]}` (`wire`: each stream's events at most once a frame, consecutive
deltas joined; unbatched, `"batched": false`, each event on its own line as it was read) and
`{"id", "models": [...] | null}`. The worker ends when its input closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import signal
import sys
from typing import Any, BinaryIO

from peri_cli.base.heldenv import set_non_dumpable
from peri_cli.base.provider import Provider
from peri_cli.providers.batching import Item, StreamEnd
from peri_cli.providers.warm import SDK_MODULES
from peri_cli.providers.wire import dump_items, load_request

FRAME = 1 / 60  # seconds: a stream's events are written at most this often
# Parsing yields the CPU to the UI: on a busy machine a key press outranks the next delta.
NICENESS = 5
LINE_LIMIT = 1 << 30  # a request carries the whole conversation
PR_SET_PDEATHSIG = 1


class Worker:
    def __init__(self, provider: Provider, out: BinaryIO, *, batched: bool = True) -> None:
        self.provider = provider
        self.out = out
        self.batched = batched
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.pending: dict[int, list[Item]] = {}
        self._flush: asyncio.TimerHandle | None = None
        self._last = 0.0

    def write(self, data: dict[str, Any]) -> None:
        self.out.write(json.dumps(data).encode() + b"\n")
        self.out.flush()

    def put(self, stream_id: int, item: Item) -> None:
        if not self.batched:
            self.write({"id": stream_id, "items": dump_items([item])})
            return
        self.pending.setdefault(stream_id, []).append(item)
        if self._flush is None:
            loop = asyncio.get_running_loop()
            self._flush = loop.call_at(max(loop.time(), self._last + FRAME), self.flush)

    def flush(self) -> None:
        self._flush = None
        self._last = asyncio.get_running_loop().time()
        pending, self.pending = self.pending, {}
        for stream_id, items in pending.items():
            self.write({"id": stream_id, "items": dump_items(items)})

    async def stream(self, stream_id: int, request: dict[str, Any]) -> None:
        try:
            async for event in self.provider.stream(load_request(request)):
                self.put(stream_id, event)
        except asyncio.CancelledError:
            self.pending.pop(stream_id, None)  # the caller closed it: nobody reads the rest
            raise
        except Exception as e:  # the caller raises it where it reads the stream
            self.put(stream_id, StreamEnd(e))
        else:
            self.put(stream_id, StreamEnd())
        finally:
            self.tasks.pop(stream_id, None)

    async def models(self, request_id: int) -> None:
        lister = getattr(self.provider, "list_models", None)
        models = None
        with contextlib.suppress(Exception):  # no list is an answer too
            models = None if lister is None else await lister()
        self.write({"id": request_id, "models": models})

    def handle(self, message: dict[str, Any]) -> None:
        op, stream_id = message.get("op"), int(message.get("id", 0))
        if op == "stream":
            task = asyncio.create_task(self.stream(stream_id, message["request"]))
            self.tasks[stream_id] = task
        elif op == "cancel" and stream_id in self.tasks:
            self.tasks[stream_id].cancel()
        elif op == "models":  # (held, so that the task is not collected before it answers)
            task = self.tasks[-stream_id] = asyncio.create_task(self.models(stream_id))
            task.add_done_callback(lambda _: self.tasks.pop(-stream_id, None))


async def serve(reader: asyncio.StreamReader, out: BinaryIO) -> None:
    """Read the configuration, then requests until the input closes."""
    from peri_cli.providers.factory import make_provider

    if not (line := await reader.readline()):
        return  # its run ended before it asked for anything
    config = json.loads(line)
    provider = make_provider(
        config["provider"], api_key=config.get("api_key"), base_url=config.get("base_url")
    )
    preload(config["provider"])  # the first request need not wait for it
    batched = config.get("batched", True)
    if batched and hasattr(os, "nice"):  # loaded: now parsing yields the CPU to the UI
        with contextlib.suppress(OSError):
            os.nice(NICENESS)
    worker = Worker(provider, out, batched=batched)
    while line := await reader.readline():
        worker.handle(json.loads(line))
    for task in list(worker.tasks.values()):
        task.cancel()


def preload(provider: str) -> None:
    """Import `provider`'s SDK and what its first request imports (nothing for other kinds)."""
    modules = SDK_MODULES.get(provider)
    for name in (*modules, f"peri_cli.providers.{provider}.provider") if modules else ():
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def die_with_parent(parent: int) -> None:
    """Linux: be killed when `parent` ends, rather than load an SDK for ~2 s for nobody (its
    input closing ends it only once it reads). Only for `prestart`'s worker: the thread that
    starts it, `peri -p`'s main thread, lives as long as its process; the TUI starts its worker
    from a thread that ends first, which would end the worker with it."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it ended before that was set
        os._exit(0)


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    await serve(reader, sys.stdout.buffer)


if __name__ == "__main__":
    # The key arrives on the pipe and lives in this process's memory: like Peri itself, no
    # `/proc/<pid>/mem` or ptrace for the user's other processes (a Bash command included).
    set_non_dumpable()
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        if len(sys.argv) > 2:  # `prestart`'s: the SDK while the run that started it loads Peri
            die_with_parent(int(sys.argv[2]))
            preload(sys.argv[1])
        asyncio.run(main())
