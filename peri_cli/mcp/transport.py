"""The SDK transport for one configured server, watched so that a connection that ends on its own
(a stdio server that exits while idle) is noticed at once, not at the next call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from peri_cli.base import file_watchers, programs
from peri_cli.base.childenv import child_env
from peri_cli.mcp.config import ServerConfig
from peri_cli.mcp.deepjson import recover
from peri_cli.mcp.inprocess import in_process_streams

HTTP_TIMEOUT = 30.0  # connect, write, pool
HTTP_READ_TIMEOUT = 300.0  # a response stream may stay open this long between events


def stdio_environment(config: ServerConfig, env: Mapping[str, str]) -> dict[str, str]:
    """Peri's environment without its credentials, plus what the entry names (even a
    credential, from the user's own entries: a project entry's `${ANTHROPIC_*}` was left empty
    when it was parsed, see `config._Expander`); PATH with the folders sandboxed commands can
    write last, so that a name planted there does not shadow a system program."""
    return programs.with_child_path(child_env(env) | dict(config.env), extra=_cwd(config))


def stdio_command(config: ServerConfig, env: Mapping[str, str]) -> str:
    """The program to start: an interpreter's name (`python3`, `node`, `bash`...) as its full
    path, never one a sandboxed command planted on PATH; ProgramMissing if that is all."""
    path = (child_env(env) | dict(config.env)).get("PATH")
    return programs.interpreter_program(config.command, path, extra=_cwd(config))


def _cwd(config: ServerConfig) -> tuple[Path, ...]:
    return () if config.cwd is None else (config.cwd,)


@asynccontextmanager
async def open_transport(
    config: ServerConfig, *, env: Mapping[str, str], errlog: TextIO, closed: anyio.Event
) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams for the SDK's Client; `closed` is set when the server's side ends."""
    async with _raw(config, env, errlog) as (read, write), _watched(read, closed) as watched:
        yield watched, write


@asynccontextmanager
async def _raw(
    config: ServerConfig, env: Mapping[str, str], errlog: TextIO
) -> AsyncIterator[tuple[Any, Any]]:
    if config.transport == "sdk":
        async with in_process_streams(config.instance) as streams:
            yield streams
    elif config.transport == "stdio":
        file_watchers.before_outside()  # what a sandboxed command left is judged first
        params = StdioServerParameters(
            command=stdio_command(config, env),
            args=list(config.args),
            env=stdio_environment(config, env),
            cwd=config.cwd,
            encoding_error_handler="replace",
        )
        async with stdio_client(params, errlog=errlog) as streams:  # its own process group
            yield streams
    elif config.transport == "http":
        timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)
        async with (
            httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as http,
            streamable_http_client(config.url, http_client=http) as streams,
        ):
            yield streams
    else:
        async with sse_client(
            config.url, headers=dict(config.headers), timeout=HTTP_TIMEOUT
        ) as streams:
            yield streams


@asynccontextmanager
async def _watched(read: Any, closed: anyio.Event) -> AsyncIterator[Any]:
    """A relay of `read` that sets `closed` when the server's side of the stream ends."""
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def relay() -> None:
        try:
            async with send:
                async for item in read:
                    await send.send(recover(item))  # a message only too deep to parse
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            closed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        try:
            yield receive
        finally:
            tg.cancel_scope.cancel()
