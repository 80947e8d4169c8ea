"""The MCP servers of one Peri run, connected in the background on a thread of their own.

The manager's event loop runs in its own thread, so starting, calling and stopping servers work
the same under the TUI's loop and headless `asyncio.run`, the SDK import (most of a second) and
server start-up never hold up the first screen, and `close()` is an ordinary call that returns once
every server is stopped (the SDK ends a stdio server's whole process group).

Registries belong to the agent's thread: tool changes are queued per registry and applied there
(`binding.RegistryBinding`), never from the manager's thread.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from peri_cli.base.tool import ToolError, ToolRegistry
from peri_cli.mcp.binding import RegistryBinding, ServerSource
from peri_cli.mcp.config import ServerConfig
from peri_cli.mcp.latch import Latch
from peri_cli.mcp.names import clean, tool_prefix
from peri_cli.mcp.plan import Skipped
from peri_cli.mcp.prompts import McpPrompt, PromptText, prompt_from_sdk, render_prompt
from peri_cli.mcp.sdklogs import quiet_sdk_logs
from peri_cli.mcp.status import ServerStatus, State, Timeouts
from peri_cli.mcp.tool import McpTool, wrap_tools

if TYPE_CHECKING:
    from peri_cli.mcp.connection import Connection, Listing

T = TypeVar("T")
CLOSE_TIMEOUT = 10.0  # the SDK's stdio shutdown takes at most ~6 s per server, all in parallel

StatusListener = Callable[[ServerStatus], None]


class McpManager:
    """Connects `servers` in the background; `skipped` ones are only listed in the statuses."""

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        *,
        skipped: Sequence[Skipped] = (),
        timeouts: Timeouts | None = None,
        env: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.timeouts = timeouts or Timeouts()
        self.env = dict(os.environ if env is None else env)
        self.log_dir = log_dir
        self._configs: dict[str, ServerConfig] = {}
        self._status: dict[str, ServerStatus] = {}
        self._ready: dict[str, Latch] = {}
        self._tools: dict[str, list[McpTool]] = {}
        self._prompts: dict[str, list[McpPrompt]] = {}
        self._connections: dict[str, Connection] = {}  # touched on the manager's thread only
        self._bindings: list[RegistryBinding] = []
        self._listeners: list[StatusListener] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._closed = False
        prefixes: dict[str, str] = {}
        for config in servers:
            clash = prefixes.get(tool_prefix(config.name))
            if clash is not None:
                self._publish(
                    config, "failed", f"its name clashes with {clash!r} in tool names; rename one"
                )
                continue
            prefixes[tool_prefix(config.name)] = config.name
            self._configs[config.name] = config
            self._ready[config.name] = Latch()
            self._publish(config, "connecting", "starting")
        for skip in skipped:
            if skip.config.name not in self._status:
                self._publish(skip.config, "skipped", skip.reason)

    # life cycle

    def start(self) -> None:
        """Start connecting every server; returns at once."""
        if self._thread is not None or self._closed:
            return
        if not self._configs:
            return
        self._thread = threading.Thread(target=self._thread_main, name="peri-mcp", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Stop every server and the thread; callable from any thread, again after an
        interrupted close (Ctrl+C while closing), and from `atexit` as the last resort."""
        self._closed = True
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._started.wait(timeout)
            loop, stop = self._loop, self._stop
            if loop is not None and stop is not None:
                with contextlib.suppress(RuntimeError):  # the loop already ended
                    loop.call_soon_threadsafe(stop.set)
            thread.join(timeout)
        atexit.unregister(self.close)

    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._main(loop))
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _main(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._stop = asyncio.Event()
        self._started.set()
        quiet_sdk_logs(self.log_dir)
        try:
            from peri_cli.mcp.connection import Connection  # the SDK import happens here
        except ImportError as e:
            for config in self._configs.values():
                self._publish(config, "failed", f"the mcp package cannot be loaded ({e})")
                self._ready[config.name].set()
            return
        del Connection
        if not self._closed:
            for config in list(self._configs.values()):
                if config.name not in self._connections:
                    self._connect(config, self._ready[config.name])
        await self._stop.wait()
        await asyncio.gather(*(c.stop() for c in self._connections.values()))

    def _connect(self, config: ServerConfig, ready: Latch) -> None:
        """A new connection attempt (manager thread); `ready` is set when it stops connecting."""
        from peri_cli.mcp.connection import Connection

        # (an in-process server writes no stderr of its own: no log file)
        logged = self.log_dir is not None and config.transport != "sdk"
        log = self.log_dir / f"{clean(config.name)}.log" if logged and self.log_dir else None
        connection = Connection(
            config,
            timeouts=self.timeouts,
            env=self.env,
            log_path=log,
            report=self._on_report,
            ready=ready,
        )
        self._connections[config.name] = connection
        connection.start()

    # reports from connections (manager thread)

    def _on_report(
        self, connection: Connection, state: State, detail: str, listing: Listing | None
    ) -> None:
        if self._connections.get(connection.name) is not connection:
            return  # an attempt that has been replaced by a reconnect
        config = connection.config
        if listing is not None:
            skipped: list[str] = []  # each tool refused alone; the status line says why

            def warn(text: str) -> None:
                self._warn(config, text)
                skipped.append(text)

            self._tools[config.name] = wrap_tools(
                config, listing.tools, caller=self.call_tool, warn=warn
            )
            detail = "; ".join([detail, *skipped])
            self._prompts[config.name] = [prompt_from_sdk(config.name, p) for p in listing.prompts]
        elif state != "connected":
            self._tools[config.name] = []
            self._prompts[config.name] = []
        if listing is not None or state != "connected":
            for binding in list(self._bindings):
                binding.post(config.name, self._tools[config.name])
        self._publish(config, state, detail)

    def _warn(self, config: ServerConfig, text: str) -> None:
        logging.getLogger("mcp").warning("%s: %s", config.name, text)

    def _publish(self, config: ServerConfig, state: State, detail: str) -> None:
        status = ServerStatus(
            name=config.name,
            scope=config.scope,
            transport=config.transport,
            state=state,
            detail=detail,
            tools=len(self._tools.get(config.name, [])) if state == "connected" else 0,
            prompts=len(self._prompts.get(config.name, [])) if state == "connected" else 0,
        )
        self._status[config.name] = status
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a broken listener must not stop the manager
                listener(status)

    # what the rest of Peri uses (any thread)

    def statuses(self) -> list[ServerStatus]:
        return list(self._status.values())

    def status(self, name: str) -> ServerStatus | None:
        return self._status.get(name)

    def tools_of(self, name: str) -> list[McpTool]:
        return list(self._tools.get(name, []))

    def add_listener(self, listener: StatusListener) -> None:
        """`listener(status)` on every change, called on the manager's thread: hand it to your
        own loop (e.g. `loop.call_soon_threadsafe`)."""
        self._listeners.append(listener)

    def is_pending(self, name: str) -> bool:
        """Still connecting (a first attempt, or a reconnect that has not reported yet)."""
        status, latch = self._status.get(name), self._ready.get(name)
        if status is None or latch is None:
            return False
        return status.state == "connecting" or not latch.is_set()

    async def wait_ready(self, name: str, timeout: float) -> bool:
        """Until `name` is no longer connecting (True), or `timeout` seconds (False)."""
        latch = self._ready.get(name)
        return True if latch is None else await latch.wait(timeout)

    def attach(self, registry: ToolRegistry) -> RegistryBinding:
        """Keep `registry` in step with the servers: one source per server now, their tools as
        they connect. Call it where the registry is built, before an agent uses it."""
        binding = RegistryBinding(self, registry)
        for name, config in self._configs.items():
            registry.add_source(ServerSource(self, binding, name, tool_prefix(config.name)))
        with self._lock:
            self._bindings.append(binding)
            for name in self._configs:
                binding.post(name, self._tools.get(name, []), notify=False)
        binding.apply()
        return binding

    def detach(self, binding: RegistryBinding) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._bindings.remove(binding)

    def contribution(self, _ctx: object) -> None:
        """A request-time contributor that adds no text: right before each request is built
        (on the agents' loop) it applies queued tool changes to every registry, so `alwaysLoad`
        tools of a late server are sent. Registries no agent holds any more are let go."""
        with self._lock:
            self._bindings = [b for b in self._bindings if b.alive]
            bindings = list(self._bindings)
        for binding in bindings:
            binding.sync()

    def reconnect(self, name: str) -> bool:
        """Start a new connection attempt for `name` (after a crash, or to pick up changes);
        False when there is no such server or the manager is not running."""
        config = self._configs.get(name)
        if config is None or self._loop is None or self._closed:
            return False
        return self._schedule_restart(config, force=True)

    def add(self, servers: Sequence[ServerConfig]) -> None:
        """Start servers that were not running (the workspace was trusted mid-run); a server
        whose entry changed is restarted with the new one. Starts the manager if needed."""
        for config in servers:
            old = self._configs.get(config.name)
            if old is not None and (old.fingerprint(), old.scope) == (
                config.fingerprint(),
                config.scope,
            ):
                continue
            clash = next(
                (
                    other
                    for other in self._configs
                    if other != config.name and tool_prefix(other) == tool_prefix(config.name)
                ),
                None,
            )
            if clash is not None:
                self._publish(
                    config, "failed", f"its name clashes with {clash!r} in tool names; rename one"
                )
                continue
            self._configs[config.name] = config
            self._ready.setdefault(config.name, Latch())
            if old is None:
                self._publish(config, "connecting", "starting")
                with self._lock:
                    for binding in self._bindings:
                        binding.post_source(config.name, tool_prefix(config.name))
            if self._loop is not None and not self._closed:
                self._schedule_restart(config, force=False)
        if self._thread is None:
            self.start()

    def _schedule_restart(self, config: ServerConfig, *, force: bool) -> bool:
        """A new connection for `config` on the manager's loop, replacing any current one (unless
        it is already for this very entry and not `force`)."""
        loop = self._loop
        if loop is None:
            return False
        name = config.name
        ready = self._ready[name] = Latch()

        async def restart() -> None:
            old = self._connections.get(name)
            if old is not None and old.config is config and not force:
                if old.state == "connecting":
                    old.ready = ready  # the first attempt for this very entry is under way
                else:
                    ready.set()
                return
            self._connections.pop(name, None)
            self._tools[name], self._prompts[name] = [], []
            for binding in list(self._bindings):
                binding.post(name, [])
            self._publish(config, "connecting", "reconnecting" if old else "starting")
            if old is not None:
                await old.stop()
            if self._closed:
                ready.set()
            else:
                self._connect(config, ready)

        try:
            asyncio.run_coroutine_threadsafe(restart(), loop)
        except RuntimeError:  # the manager's loop has ended
            ready.set()
            return False
        return True

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        """Run one tool call on the server's connection (from the agent's loop); ToolError with a
        message for the model when it cannot."""
        from peri_cli.mcp.connection import CallFailed

        try:
            return await self._on_manager_loop(lambda c: c.call_tool(tool, arguments), server)
        except CallFailed as e:
            raise ToolError(str(e)) from e

    def prompts(self) -> list[McpPrompt]:
        """Prompts of the connected servers, for slash commands `/mcp__<server>__<prompt>`."""
        return [p for name in self._configs for p in self._prompts.get(name, [])]

    def find_prompt(self, command: str) -> McpPrompt | None:
        command = command.removeprefix("/")
        return next((p for p in self.prompts() if p.command == command), None)

    async def get_prompt(self, prompt: McpPrompt, arguments: dict[str, str]) -> PromptText:
        """The prompt's messages as text; ToolError with a one-line reason when it fails."""
        from peri_cli.mcp.connection import CallFailed

        try:
            result = await self._on_manager_loop(
                lambda c: c.get_prompt(prompt.name, arguments), prompt.server
            )
        except CallFailed as e:
            raise ToolError(str(e)) from e
        return render_prompt(result)

    async def _on_manager_loop(
        self, make: Callable[[Connection], Coroutine[Any, Any, T]], server: str
    ) -> T:
        from peri_cli.mcp.connection import CallFailed

        loop = self._loop
        if loop is None or self._closed:
            raise CallFailed(f"The MCP server {server!r} is not running.")

        async def run() -> T:
            connection = self._connections.get(server)
            if connection is None:
                raise CallFailed(f"The MCP server {server!r} is not connected.")
            return await make(connection)

        try:
            future = asyncio.run_coroutine_threadsafe(run(), loop)
        except RuntimeError as e:  # the manager's loop has ended
            raise CallFailed(f"The MCP server {server!r} is not running.") from e
        return await asyncio.wrap_future(future)
