"""A server that lives in this process (a program's `create_sdk_mcp_server`), reached over the
`mcp` SDK's in-memory streams: the same client session, listing, calls, timeouts and failures as
a stdio server, with no process. The server runs on the manager's loop; what it does with a call
(the SDK room sends it to the program's own loop) is its business."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol, runtime_checkable

import anyio


@runtime_checkable
class InProcessServer(Protocol):
    """What a `{"type": "sdk", "instance": ...}` entry holds: it makes the `mcp` SDK's low-level
    `Server` (on the manager's thread, where the SDK is imported)."""

    def lowlevel(self) -> Any: ...


def is_in_process(instance: object) -> bool:
    return isinstance(instance, InProcessServer)


@asynccontextmanager
async def in_process_streams(instance: InProcessServer) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams of a client connected to `instance`'s server, which runs in a task
    of its own until the streams are left (then it is cancelled, mid-call included)."""
    from mcp.shared.memory import create_client_server_memory_streams

    server = instance.lowlevel()
    async with (
        create_client_server_memory_streams() as (client, (read, write)),
        anyio.create_task_group() as tg,
    ):

        async def serve() -> None:
            await server.run(read, write, server.create_initialization_options())

        tg.start_soon(serve)
        try:
            yield client
        finally:
            tg.cancel_scope.cancel()
