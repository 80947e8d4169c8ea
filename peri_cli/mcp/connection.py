"""One server's connection, owned by one task on the manager's loop: connect within the timeout,
list tools and prompts, serve calls, notice the end, and stop (the SDK ends a stdio server's whole
process group). Every failure becomes a one-line state the user can read, never an exception."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, UNSUPPORTED_PROTOCOL_VERSION, Implementation
from pydantic import ValidationError

from peri_cli import __version__
from peri_cli.base.programs import ProgramMissing
from peri_cli.base.textsafe import visible
from peri_cli.mcp.config import ServerConfig
from peri_cli.mcp.latch import Latch
from peri_cli.mcp.status import State, Timeouts
from peri_cli.mcp.transport import open_transport

MAX_PAGES = 20  # of tools/list or prompts/list: a paginator that never ends cannot hang a connect
MAX_DETAIL = 300


class CallFailed(Exception):
    """A call that did not produce a result; the message is for the model."""


@dataclass
class Listing:
    """What a connected server offers, as the SDK gave it."""

    tools: list[Any]
    prompts: list[Any]


# (connection, new state, one-line detail, listing when connected)
Report = Callable[["Connection", State, str, Listing | None], None]


class Connection:
    def __init__(
        self,
        config: ServerConfig,
        *,
        timeouts: Timeouts,
        env: Mapping[str, str],
        log_path: Path | None,
        report: Report,
        ready: Latch,
    ) -> None:
        self.config = config
        self.timeouts = timeouts
        self.env = env
        self.log_path = log_path
        self.report = report
        self.state: State = "connecting"
        self.summary = ""
        self.ready = ready  # set when this attempt is no longer connecting
        self._client: Client | None = None
        self._stop = anyio.Event()
        self._closed = anyio.Event()
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._refresh: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def start(self) -> None:
        """Begin connecting in the background (on the manager's loop)."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """End the connection; the SDK's shutdown is bounded, so this returns."""
        self._stop.set()
        if self._scope is not None and self.state == "connecting":
            self._scope.cancel()  # a connect in progress is abandoned, not waited out
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._task

    # the owner task

    async def _run(self) -> None:
        # The connect timeout is the deadline of a scope around the connection's whole life
        # (the SDK's task groups must nest inside it), lifted once the server is listed; a timer
        # reports the timeout at once, before the SDK's bounded shutdown has finished.
        timer = asyncio.get_running_loop().call_later(self.timeouts.connect, self._deadline_passed)
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.timeouts.connect) as scope:
                self._scope = scope
                async with contextlib.AsyncExitStack() as stack:
                    errlog = stack.enter_context(self._open_log())
                    client = await self._connect(stack, errlog)
                    listing = await self._list(client)
                    scope.deadline = math.inf
                    timer.cancel()
                    self._client = client
                    self._set("connected", _summary(listing), listing)
                    await _first(self._stop.wait(), self._closed.wait())
                    self._client = None
                    if not self._stop.is_set():
                        ended = "the connection ended (the server exited)"
                        self._set("failed", self._with_log(ended))
            if scope.cancelled_caught and not self._stop.is_set():
                self._set("failed", self._no_answer())
        except Exception as e:  # the server could not be started or spoke nonsense
            self._set("failed", self._with_log(describe(e)))
        finally:
            timer.cancel()
            self._client = None
            if self._refresh is not None:
                self._refresh.cancel()
            if self._stop.is_set() and self.state in ("connecting", "connected"):
                self._set("stopped", "stopped")

    async def _connect(self, stack: contextlib.AsyncExitStack, errlog: TextIO) -> Client:
        """The initialize handshake every server in the wild speaks; a server that accepts only
        the newer protocol says so, and is then asked with the SDK's negotiation."""
        for mode in ("legacy", "auto"):
            self._closed = anyio.Event()
            transport = open_transport(
                self.config, env=self.env, errlog=errlog, closed=self._closed
            )
            client = Client(
                transport,
                mode=mode,
                client_info=Implementation(name="peri", version=__version__),
                message_handler=self._on_message,
            )
            try:
                return await stack.enter_async_context(client)
            except MCPError as e:
                if mode == "legacy" and e.code == UNSUPPORTED_PROTOCOL_VERSION:
                    continue
                raise
        raise AssertionError("unreachable")

    async def _list(self, client: Client) -> Listing:
        capabilities = client.server_capabilities
        tools = await _pages(client.list_tools, "tools")
        prompts = await _pages(client.list_prompts, "prompts") if capabilities.prompts else []
        return Listing(tools, prompts)

    async def _on_message(self, message: Any) -> None:
        """A server that changes its tools or prompts says so; list them again. A line that is
        not MCP is noted (the SDK has already dropped it)."""
        if isinstance(message, Exception):
            self._note("it wrote output that is not MCP (ignored)")
            return
        changed = types.ToolListChangedNotification | types.PromptListChangedNotification
        if isinstance(message, changed) and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.get_running_loop().create_task(self._relist())

    async def _relist(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            with anyio.fail_after(self.timeouts.connect):
                listing = await self._list(client)
        except Exception:  # keep what was listed before
            return
        if self._client is client:
            self._set("connected", _summary(listing), listing)

    # calls (tasks on the manager's loop, submitted from the agent's thread)

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        client = self._client
        if client is None or self.state != "connected":
            raise CallFailed(self.unavailable())
        try:
            with anyio.fail_after(self.timeouts.call):
                return await client.call_tool(tool, arguments)
        except TimeoutError:
            raise CallFailed(
                f"The MCP server {self.name!r} did not answer within "
                f"{self.timeouts.call:g} s; the call was abandoned. Tell the user; they can "
                "reconnect the server with /mcp."
            ) from None
        except MCPError as e:
            if e.code == CONNECTION_CLOSED and self._stop.is_set():
                raise CallFailed(
                    f"The MCP server {self.name!r} was stopped during the call (Peri is closing, "
                    "or the user reconnected it); the call did not finish."
                ) from None
            if e.code == CONNECTION_CLOSED:
                self._lost(f"the connection ended during a call to {tool} (the server crashed?)")
                raise CallFailed(
                    f"The MCP server {self.name!r} closed the connection during the call (it "
                    "may have crashed). Its tools are unavailable until the user reconnects it "
                    "with /mcp."
                ) from None
            raise CallFailed(
                f"The MCP server {self.name!r} refused the call: {_line(e.message)}"
            ) from None
        except ValidationError:
            self._note(f"a call to {tool} returned a malformed result")
            raise CallFailed(
                f"The MCP server {self.name!r} answered with a malformed result; nothing usable "
                "came back. Do not retry the same call."
            ) from None

    async def get_prompt(self, prompt: str, arguments: dict[str, str]) -> Any:
        client = self._client
        if client is None or self.state != "connected":
            raise CallFailed(self.unavailable())
        try:
            with anyio.fail_after(self.timeouts.call):
                return await client.get_prompt(prompt, arguments)
        except TimeoutError:
            raise CallFailed(f"the MCP server {self.name!r} did not answer in time") from None
        except MCPError as e:
            raise CallFailed(f"the MCP server {self.name!r} refused: {_line(e.message)}") from None
        except ValidationError:
            raise CallFailed(f"the MCP server {self.name!r} answered with nonsense") from None

    def unavailable(self) -> str:
        what = {
            "connecting": "is still connecting",
            "failed": "is not connected (it failed)",
            "stopped": "has been stopped",
        }.get(self.state, "is not connected")
        return (
            f"The MCP server {self.name!r} {what}; its tools cannot run now. The user can "
            "reconnect it with /mcp."
        )

    # state

    def _set(self, state: State, detail: str, listing: Listing | None = None) -> None:
        if self.state in ("failed", "stopped") and self.ready.is_set():
            return  # this attempt has ended; the first reason it ended is the one worth showing
        self.state = state
        if listing is not None:
            self.summary = _summary(listing)
        self.report(self, state, _line(detail), listing)
        if state != "connecting":
            self.ready.set()

    def _note(self, text: str) -> None:
        """Something worth showing about a connection that goes on (a malformed reply)."""
        if self.state == "connected":
            self.report(self, "connected", _line(f"{self.summary}; {text}"), None)

    def _lost(self, why: str) -> None:
        self._set("failed", self._with_log(why))
        self._closed.set()  # the owner task wakes up and shuts the transport down

    def _deadline_passed(self) -> None:
        if self.state == "connecting":
            self._set("failed", self._no_answer())

    def _no_answer(self) -> str:
        return self._with_log(f"no answer within {self.timeouts.connect:g} s (timed out)")

    def _open_log(self) -> TextIO:
        """Where the server's stderr goes: its log file, or nowhere (never the terminal)."""
        if self.log_path is not None:
            try:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                return open(self.log_path, "w", encoding="utf-8", errors="replace")
            except OSError:  # an unwritable PERI_HOME must not stop the server
                self.log_path = None
        return open(os.devnull, "w")

    def _with_log(self, text: str) -> str:
        """`text`, plus the last thing the server wrote on stderr (often the real reason)."""
        tail = last_line(self.log_path) if self.log_path else ""
        return f"{text}; stderr: {tail}" if tail else text


def describe(e: BaseException) -> str:
    """One line for an exception, looking inside exception groups for the real cause."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    if isinstance(e, FileNotFoundError):
        return f"cannot start: command not found ({e.filename or e})"
    if isinstance(e, PermissionError):
        return f"cannot start: permission denied ({e.filename or e})"
    if isinstance(e, ProgramMissing):
        return f"cannot start: {e}"
    if isinstance(e, MCPError):
        return f"the server refused: {e.message}"
    if isinstance(e, ValidationError):
        return "the server sent something that is not MCP"
    name = type(e).__name__
    text = str(e)
    return f"{name}: {text}" if text else name


def last_line(path: Path, limit: int = 4096) -> str:
    """The last non-empty line of a log file (its last few KB only)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in data.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _line(text: str) -> str:
    """Untrusted text as one visible line of bounded length."""
    flat = visible(" ".join(str(text).split()))
    return flat if len(flat) <= MAX_DETAIL else flat[: MAX_DETAIL - 1] + "…"


def _summary(listing: Listing) -> str:
    tools, prompts = len(listing.tools), len(listing.prompts)
    text = f"{tools} tool{'s' if tools != 1 else ''}"
    return text + (f", {prompts} prompt{'s' if prompts != 1 else ''}" if prompts else "")


async def _pages(fetch: Callable[..., Awaitable[Any]], attr: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor=cursor)
        items.extend(getattr(page, attr))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def _first(*waits: Awaitable[Any]) -> None:
    """Return when the first of `waits` is done."""
    async with anyio.create_task_group() as tg:

        async def one(w: Awaitable[Any]) -> None:
            await w
            tg.cancel_scope.cancel()

        for w in waits:
            tg.start_soon(one, w)
