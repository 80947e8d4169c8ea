"""The runtime's MCP side: starting the configured servers as trust allows, the TUI's questions
about servers added since, `/mcp` status and reconnect, and MCP prompts as slash commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.agent.host import CommandError, ExtraCommand, ServerQuestion
from peri_cli.base.textsafe import visible
from peri_cli.context.meta import MetaState
from peri_cli.permissions.trust import TrustState
from peri_cli.permissions.truststore import TrustRecord, TrustStore, TrustStoreError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from peri_cli.base.settings import LoadedSettings, Settings
    from peri_cli.mcp.boot import Boot
    from peri_cli.mcp.config import ServerConfig
    from peri_cli.mcp.manager import McpManager
    from peri_cli.session.store import SessionStore


# Where the servers a program (`PeriOptions.mcp_servers`) or an editor (ACP `session/new`)
# passed come from: the settings layer `runtime.mcp_layers` makes of them.
GIVEN_SOURCE = "<PeriOptions.mcp_servers>"
GIVE_MARGIN = 1.0  # seconds beyond the start-up timeout a prompt waits for a given server


class McpSide:
    """Mixed into `Runtime`: the MCP servers of one run."""

    if TYPE_CHECKING:
        workspace: Path
        peri_home: Path
        env: Mapping[str, str]
        settings: Settings
        store: SessionStore
        loaded: LoadedSettings | None
        trust: TrustState | None
        meta: MetaState
        interactive: bool
        warnings: list[str]
        mcp: McpManager | None
        _mcp_boot: Boot | None
        _unapproved: list[ServerConfig]

        @property
        def trusted(self) -> bool: ...

    def start_mcp(self) -> None:
        """Connect the configured MCP servers in the background (project ones only when the
        workspace is trusted; the rest are named in the warnings)."""
        from peri_cli.mcp.boot import start_servers

        record = self._trust_record()
        allowed = record.servers if record is not None else frozenset()
        refused = record.refused_servers if record is not None else frozenset()
        by_flag = self.trust is not None and self.trust.why == "flag"
        self._mcp_boot = start_servers(
            self.workspace,
            self.env,
            self.loaded.mcp_servers if self.loaded is not None else (),
            trusted=self.trusted,
            log_dir=self.store.root / "mcp-logs",
            scrub_env=self.settings.scrub_env,
            approve=None if by_flag else (lambda config: config.fingerprint() in allowed),
        )
        self.mcp = self._mcp_boot.manager
        self.warnings.extend(self._mcp_boot.warnings)
        for config in self._mcp_boot.unapproved:
            if config.fingerprint() in refused:
                why = "you said not to start it (start peri with --trust-workspace to run it)"
            elif self.interactive:
                self._unapproved.append(config)  # the TUI asks about it
                continue
            else:
                why = (
                    "it was added after you trusted this workspace; start `peri` once to "
                    "approve it, or run with --trust-workspace"
                )
            where = display_path(config.source, self.workspace)
            self.warnings.append(
                visible(f"MCP server {config.name!r} from {where} not started: {why}")
            )

    def _trust_record(self) -> TrustRecord | None:
        if self.trust is not None:  # read with the settings at start: not read again
            return self.trust.record
        return TrustStore(self.peri_home).lookup(self.workspace)[0]

    def _project_servers(self) -> list[ServerConfig]:
        """The project's MCP server entries as they are now (`.mcp.json`, project settings)."""
        from peri_cli.mcp.config import gather_configs

        settings = self.loaded.mcp_servers if self.loaded is not None else ()
        configs = gather_configs(self.workspace, self.env, settings)
        return [c for c in configs.servers if c.scope != "user"]

    def server_questions(self) -> list[ServerQuestion]:
        return [
            ServerQuestion(c.name, c.details(), display_path(c.source, self.workspace))
            for c in self._unapproved
        ]

    def answer_server(self, name: str, start: bool | None) -> str | None:
        config = next((c for c in self._unapproved if c.name == name), None)
        if config is None:
            return None
        self._unapproved.remove(config)
        if start is None:
            return None  # asked again next run
        problem = None
        try:
            TrustStore(self.peri_home).remember_server(
                self.workspace, config.fingerprint(), start=start
            )
        except TrustStoreError as e:
            problem = f"{e}; the answer holds for this run only"
        if start and self.mcp is not None:
            self.mcp.add([config])
        return problem

    def _mcp_trusted(self) -> None:
        """The workspace was trusted mid-run: its project servers start too."""
        if self._mcp_boot is None:
            return
        from peri_cli.mcp.boot import trust_granted

        self._mcp_boot = trust_granted(
            self._mcp_boot,
            self.workspace,
            self.env,
            self.loaded.mcp_servers if self.loaded is not None else (),
            log_dir=self.store.root / "mcp-logs",
            scrub_env=self.settings.scrub_env,
        )
        self.mcp = self._mcp_boot.manager
        self.warnings.extend(self._mcp_boot.warnings)

    # MCP for the user interfaces (SessionHost)

    def _mcp_on(self) -> McpManager | None:
        """The servers, unless this session's Meta Harness turned MCP off."""
        return self.mcp if self.meta.enabled("mcp") else None

    def mcp_statuses(self) -> list[str]:
        manager = self._mcp_on()
        return [] if manager is None else [visible(s.line()) for s in manager.statuses()]

    def mcp_status_list(self) -> list[dict[str, object]]:
        """Every server now, in the Claude Agent SDK's `get_mcp_status()` entry shape."""
        from peri_cli.mcp.status import sdk_status

        manager = self._mcp_on()
        if manager is None:
            return []
        return [
            sdk_status(s, [(t.remote_name, t.spec().description) for t in manager.tools_of(s.name)])
            for s in manager.statuses()
        ]

    def _given_servers(self) -> list[str]:
        """The servers the program or editor passed (not those the settings files name)."""
        servers = self.loaded.mcp_servers if self.loaded is not None else ()
        return [s.name for s in servers if s.source.where == GIVEN_SOURCE]

    async def wait_given_servers(self, say: Callable[[str], None]) -> None:
        """Before a prompt: wait for the servers the program or editor passed that are still
        starting (up to their start-up timeout), `say`ing which; so their tools are there for
        the prompt's first call. Servers from the settings files are not waited for."""
        import asyncio

        manager = self._mcp_on()
        if manager is None:
            return
        waiting = [n for n in self._given_servers() if manager.is_pending(n)]
        if not waiting:
            return
        limit = manager.timeouts.connect
        names = ", ".join(repr(n) for n in waiting)
        which = "server" if len(waiting) == 1 else "servers"
        say(visible(f"Waiting for MCP {which} {names} still starting (up to {limit:g} s)"))
        await asyncio.gather(*(manager.wait_ready(n, limit + GIVE_MARGIN) for n in waiting))

    def mcp_reconnect(self, name: str) -> str:
        manager = self._mcp_on()
        if manager is None:
            return "No MCP servers are configured."
        status = manager.status(name)
        if status is None:
            names = ", ".join(repr(s.name) for s in manager.statuses())
            return visible(f"No MCP server named {name!r}; configured: {names}.")
        if status.state == "skipped":
            return visible(f"MCP server {name!r} is not started here: {status.detail}")
        if not manager.reconnect(name):
            return visible(f"Cannot reconnect {name!r}: the MCP servers are stopped.")
        return visible(f"Reconnecting MCP server {name!r}; /mcp shows how it goes.")

    def mcp_prompt_commands(self) -> list[ExtraCommand]:
        manager = self._mcp_on()
        if manager is None:
            return []
        return [
            ExtraCommand(p.command, p.argument_hint, p.description, "mcp")
            for p in manager.prompts()
        ]

    async def expand_mcp_prompt(self, text: str) -> str | None:
        from peri_cli.base.tool import ToolError
        from peri_cli.mcp.names import PREFIX, tool_prefix
        from peri_cli.mcp.prompts import PromptArgumentError, prompt_arguments

        manager = self._mcp_on()
        stripped = text.strip()
        if manager is None or not stripped.startswith(f"/{PREFIX}__"):
            return None
        command, _, rest = stripped[1:].partition(" ")
        names = [s.name for s in manager.statuses() if command.startswith(tool_prefix(s.name))]
        if not names:
            return None  # no such server: ordinary text for the model
        server = max(names, key=lambda n: len(tool_prefix(n)))
        if manager.is_pending(server):
            await manager.wait_ready(server, manager.timeouts.connect)
        prompt = manager.find_prompt(command)
        if prompt is None:
            status = manager.status(server)
            if status is not None and status.state != "connected":
                raise CommandError(
                    f"MCP server {server!r} is not connected ({status.state}): {status.detail}"
                )
            raise CommandError(f"MCP server {server!r} has no prompt /{command}; /mcp lists it")
        try:
            arguments = prompt_arguments(prompt, rest.strip())
            result = await manager.get_prompt(prompt, arguments)
        except (PromptArgumentError, ToolError) as e:
            raise CommandError(str(e)) from e
        if not result.text.strip():
            raise CommandError(f"/{command} returned no text")
        return result.text


def display_path(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)
