"""One editor session over one `PeriClient`: its prompt turns, cancel, replay, mode and model.

The session is a Peri session in the shared store (the same UUID over ACP, in `peri -r ID` and
in the TUI); the editor's MCP servers join the ones Peri's settings name."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp import Client, RequestError
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    UnstructuredCommandInput,
)

from peri_cli.acp.asking import EditorAsker
from peri_cli.acp.files import EditorFiles
from peri_cli.acp.prompt import prompt_of
from peri_cli.acp.tools import plain
from peri_cli.acp.updates import Update, Updates, message
from peri_cli.sdk import MODES, PeriClient, PeriError, PeriOptions, ResultEvent
from peri_cli.sdk.runtime import RunSpec, mcp_layers

log = logging.getLogger("peri.acp")

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
MODE_NAMES = {
    "default": ("Default", "Ask before edits and commands"),
    "accept-edits": ("Accept edits", "Edits in the workspace run without asking"),
    "plan": ("Plan", "Read and plan; no edits or commands"),
    "bypass": ("Bypass permissions", "Everything runs without asking"),
}


@dataclass
class Launch:
    """How `peri acp` was started: its flags, for every session it opens."""

    provider: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    trust_workspace: bool = False
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    fs_read: bool = False  # the client offers fs/read_text_file
    fs_write: bool = False
    forms: bool = False  # the client offers elicitation/create in form mode

    @property
    def allow_bypass(self) -> bool:
        return self.permission_mode == "bypass"


def mcp_config(servers: list[Any] | None) -> dict[str, Any]:
    """The editor's MCP servers in the `.mcp.json` shape."""
    out: dict[str, Any] = {}
    for server in servers or []:
        pairs = getattr(server, "headers", None) or getattr(server, "env", None) or []
        values = {p.name: p.value for p in pairs}
        kind = getattr(server, "type", None)
        if kind in ("http", "sse"):
            out[server.name] = {"type": kind, "url": server.url, "headers": values}
        elif hasattr(server, "command"):
            out[server.name] = {"command": server.command, "args": list(server.args), "env": values}
    return out


class EditorSession:
    def __init__(self, conn: Client, client: PeriClient, cwd: Path, launch: Launch) -> None:
        self.conn, self.client, self.cwd, self.launch = conn, client, cwd, launch
        self.updates = Updates(cwd, client.editor_kind)
        self.told_warnings = False
        self.lock = asyncio.Lock()  # one prompt at a time

    @classmethod
    async def open(
        cls, conn: Client, launch: Launch, cwd: str, servers: list[Any] | None, resume: str | None
    ) -> EditorSession:
        workspace = Path(cwd).expanduser()
        if not workspace.is_absolute() or not workspace.is_dir():
            raise RequestError.invalid_params({"cwd": f"not an absolute directory: {cwd}"})
        files = None
        if launch.fs_read or launch.fs_write:
            files = EditorFiles(conn, read=launch.fs_read, write=launch.fs_write)
        spec = RunSpec(
            workspace=workspace.resolve(),
            env=dict(os.environ),
            provider=launch.provider,
            model=launch.model,
            permission_mode=launch.permission_mode,
            trust_workspace=launch.trust_workspace,
            allowed_tools=launch.allowed_tools,
            disallowed_tools=launch.disallowed_tools,
            resume=resume,
            extra_layers=mcp_layers(mcp_config(servers)),
            files=files,
        )
        asker = EditorAsker(conn, spec.workspace, forms=launch.forms)
        options = PeriOptions(can_use_tool=asker, include_partial_messages=True)
        client = PeriClient(options, spec=spec)
        try:
            await client.connect()
        except PeriError as e:
            code = -32002 if e.exit_code == 2 and resume else -32603
            raise RequestError(code, str(e)) from e
        asker.kind_of = client.editor_kind
        if files is not None:
            files.session_id = client.session_id
        session = cls(conn, client, spec.workspace, launch)
        asker.on_mode, asker.updates = session.mode_changed, session.updates
        return session

    @property
    def id(self) -> str:
        return self.client.session_id

    async def send(self, *updates: Update | Any) -> None:
        for update in updates:
            await self.conn.session_update(session_id=self.id, update=update)

    async def prompt(self, blocks: list[Any]) -> StopReason:
        if self.lock.locked():
            raise RequestError.invalid_request({"details": "a prompt is already running"})
        async with self.lock:
            return await self._prompt(blocks)

    async def _prompt(self, blocks: list[Any]) -> StopReason:
        asked = prompt_of(blocks, self.cwd)
        try:
            await self.client.send(asked.text, images=asked.images)
        except PeriError as e:
            if self.client.credentials_problem:
                raise RequestError.auth_required({"details": str(e)}) from e
            raise RequestError.invalid_params({"details": str(e)}) from e
        if not self.told_warnings:
            self.told_warnings = True
            for line in self.client.warnings:  # e.g. an untrusted folder's files stayed off
                await self.send(message(f"> Peri: {plain(line, 2000)}\n\n"))
        spoke = False
        async for event in self.client.events():
            if isinstance(event, ResultEvent):
                return await self._finish(event, spoke)
            for update in self.updates.live(event):
                spoke = spoke or update.session_update == "agent_message_chunk"
                await self.send(update)
        return "end_turn"

    async def _finish(self, result: ResultEvent, spoke: bool) -> StopReason:
        if result.error == "cancelled":
            return "cancelled"
        if result.error and result.error.startswith("stopped after"):
            return "max_turn_requests"
        if result.error:
            await self.send(message(f"\n\nPeri: error: {result.error}"))
        elif result.result and not spoke:  # a slash command's answer (/compact, /clear)
            await self.send(message(result.result))
        if not result.error and result.stop_reason in ("max_tokens", "refusal"):
            return "max_tokens" if result.stop_reason == "max_tokens" else "refusal"
        return "end_turn"

    async def cancel(self) -> None:
        await self.client.interrupt()

    async def replay(self) -> None:
        for event in self.client.history():
            await self.send(*self.updates.replayed(event))
        self.updates.calls.clear()

    def modes(self) -> SessionModeState:
        current = self.client.mode
        ids = [m for m in MODES if m != "bypass" or self.launch.allow_bypass or current == m]
        available = [
            SessionMode(id=m, name=MODE_NAMES[m][0], description=MODE_NAMES[m][1]) for m in ids
        ]
        return SessionModeState(current_mode_id=current, available_modes=available)

    async def set_mode(self, mode_id: str) -> None:
        if mode_id not in [m.id for m in self.modes().available_modes]:
            raise RequestError.invalid_params({"modeId": f"not an available mode: {mode_id}"})
        await self.client.set_mode(mode_id)
        await self.send(
            CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )

    async def mode_changed(self, mode_id: str) -> None:
        """The mode changed from inside a turn (an approved plan): the editor is told."""
        await self.send(
            CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )

    async def config_options(self) -> list[Any]:
        return self.model_options(await self.client.list_models())

    def model_options(self, models: list[str] | None = None) -> list[Any]:
        """The model option: the provider's `models`, or only the current model until known."""
        return [
            SessionConfigOptionSelect(
                id="model",
                name="Model",
                category="model",
                type="select",
                current_value=self.client.model,
                options=[
                    SessionConfigSelectOption(value=m, name=m)
                    for m in (models or [self.client.model])
                ],
            )
        ]

    async def announce_models(self) -> None:
        """The provider's model list as a `config_option_update`, after session/new's answer:
        asking for it first held that answer for a request (and the provider SDK's import)."""
        models = await self.client.list_models()
        if models == [self.client.model]:
            return  # no list beyond what the answer said
        try:
            await self.send(
                ConfigOptionUpdate(
                    session_update="config_option_update", config_options=self.model_options(models)
                )
            )
        except Exception as e:  # the editor went away; nothing else to tell it
            log.info("config_option_update not sent: %s", e)

    async def set_config(self, config_id: str, value: Any) -> list[Any]:
        if config_id != "model" or not isinstance(value, str) or not value.strip():
            raise RequestError.invalid_params({"configId": f"no such option value: {config_id}"})
        await self.client.set_model(value.strip())
        options = await self.config_options()
        await self.send(
            ConfigOptionUpdate(session_update="config_option_update", config_options=options)
        )
        return options

    async def announce_commands(self) -> None:
        commands = [
            AvailableCommand(
                name=name,
                description=plain(description, 300) or name,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
                if hint
                else None,
            )
            for name, description, hint in self.client.commands()
        ]
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=commands
        )
        try:
            await self.send(update)
        except Exception as e:  # the editor went away; nothing else to tell it
            log.info("available_commands_update not sent: %s", e)

    async def close(self) -> None:
        await self.client.close()
