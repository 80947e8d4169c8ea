"""The agent's side of the MCP servers: each agent's registry kept in step with them on the
agent's own thread. Tool changes arrive from the manager's thread and are queued per registry
(`RegistryBinding.post`), then applied where the agent's loop runs (`RegistryBinding.sync`)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from typing import Protocol

from peri_cli.base.tool import ToolRegistry
from peri_cli.mcp.tool import McpTool


class Readiness(Protocol):
    """Whether a server is still connecting, and waiting until it is not (the manager)."""

    def is_pending(self, name: str) -> bool: ...

    async def wait_ready(self, name: str, timeout: float) -> bool: ...


class RegistryBinding:
    """One agent's registry, kept in step with the servers on the agent's own thread."""

    def __init__(self, manager: Readiness, registry: ToolRegistry) -> None:
        self.manager = manager
        self._registry = weakref.ref(registry)  # a finished SubAgent's registry may go
        self._lock = threading.Lock()
        self._queued: dict[str, list[McpTool]] = {}
        self._queued_sources: list[tuple[str, str]] = []
        self._current: dict[str, list[str]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def post(self, server: str, tools: list[McpTool], *, notify: bool = True) -> None:
        """Queue `server`'s tools (any thread); the next `sync` on the agent's loop applies them."""
        with self._lock:
            self._queued[server] = list(tools)
            loop = self._loop
        if notify and loop is not None:
            with contextlib.suppress(RuntimeError):  # that loop has closed
                loop.call_soon_threadsafe(self.sync)

    def post_source(self, server: str, prefix: str) -> None:
        """Queue a new server's source (any thread)."""
        with self._lock:
            self._queued_sources.append((server, prefix))
            loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.sync)

    def sync(self) -> None:
        """Apply queued changes, if called on a thread running an event loop (the agent's);
        from a worker thread it does nothing, since the agent's loop may be reading the registry."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.apply()

    @property
    def alive(self) -> bool:
        return self._registry() is not None

    def apply(self) -> None:
        with self._lock:
            queued, self._queued = self._queued, {}
            sources, self._queued_sources = self._queued_sources, []
        registry = self._registry()
        if registry is None:
            return
        for server, prefix in sources:
            registry.add_source(ServerSource(self.manager, self, server, prefix))
        for server, tools in queued.items():
            for name in self._current.pop(server, []):
                registry.remove(name)
            for tool in tools:
                registry.add(tool)
            self._current[server] = [t.name for t in tools]

    def contribution(self, _ctx: object) -> None:
        """A request-time contributor that adds no text: it applies queued tool changes right
        before each request is built (so `alwaysLoad` tools of a late server are sent)."""
        self.sync()


class ServerSource:
    """The ToolSource of one server in one registry."""

    def __init__(
        self, manager: Readiness, binding: RegistryBinding, name: str, prefix: str
    ) -> None:
        self._manager = manager
        self._binding = binding
        self._name = name
        self._prefix = prefix

    @property
    def name(self) -> str:
        return self._name

    @property
    def tool_prefix(self) -> str:
        return self._prefix

    def is_pending(self) -> bool:
        self._binding.sync()
        return self._manager.is_pending(self._name)

    async def wait(self, timeout: float) -> None:
        await self._manager.wait_ready(self._name, timeout)
        self._binding.sync()
