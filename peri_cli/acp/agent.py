"""The `acp.Agent` methods Peri answers: initialize, authenticate, session/new, session/load,
session/prompt, session/cancel, session/set_mode and session/set_config_option. Anything else
is -32601 (the SDK's router), bad params -32602."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthEnvVar,
    AuthMethodAgent,
    ClientCapabilities,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TerminalAuthMethod,
)

from peri_cli import __version__
from peri_cli.acp.session import EditorSession, Launch

log = logging.getLogger("peri.acp")

SPOKEN = frozenset({1})  # the protocol versions Peri speaks

AUTH_METHODS: list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent] = [
    EnvVarAuthMethod(
        type="env_var",
        id=f"{name.lower()}-api-key",
        name=f"{label} API key",
        description=f"Set {name}_API_KEY (or {name}_BASE_URL for a local server) in the "
        "environment the editor starts `peri acp` with.",
        vars=[AuthEnvVar(name=f"{name}_API_KEY", label=f"{label} API key", secret=True)],
    )
    for name, label in (("ANTHROPIC", "Anthropic"), ("OPENAI", "OpenAI"))
]


class PeriAgent:
    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.conn: Client | None = None
        self.sessions: dict[str, EditorSession] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        fs = client_capabilities.fs if client_capabilities else None
        self.launch.fs_read = bool(fs and fs.read_text_file)
        self.launch.fs_write = bool(fs and fs.write_text_file)
        elicitation = client_capabilities.elicitation if client_capabilities else None
        self.launch.forms = bool(elicitation and elicitation.form is not None)
        return InitializeResponse(
            # the version asked when Peri speaks it, else Peri's latest (the spec's rule)
            protocol_version=protocol_version if protocol_version in SPOKEN else PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            auth_methods=AUTH_METHODS,
            agent_info=Implementation(name="peri", title="Peri", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        # the key comes from the environment; there is nothing to log in to
        if method_id not in {m.id for m in AUTH_METHODS}:
            raise RequestError.invalid_params({"methodId": f"unknown: {method_id}"})

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers, None)
        # the model list follows as an update: the editor can prompt before it arrives
        self._later(session.announce_models())
        return NewSessionResponse(
            session_id=session.id, modes=session.modes(), config_options=session.model_options()
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        old = self.sessions.pop(session_id, None)
        if old is not None:  # loaded again: release the first hold on the file
            await old.close()
        session = await self._open(cwd, mcp_servers, session_id, announce=False)
        await session.replay()
        self._later(session.announce_commands())
        return LoadSessionResponse(
            modes=session.modes(), config_options=await session.config_options()
        )

    async def _open(
        self, cwd: str, servers: list[Any] | None, resume: str | None, *, announce: bool = True
    ) -> EditorSession:
        assert self.conn is not None
        session = await EditorSession.open(self.conn, self.launch, cwd, servers, resume)
        self.sessions[session.id] = session
        if announce:
            self._later(session.announce_commands())
        return session

    def _later(self, work: Any) -> None:
        """After this answer: the editor learns of the session before its updates."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _session(self, session_id: str) -> EditorSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no such session: {session_id}"})
        return session

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        stop = await self._session(session_id).prompt(prompt)
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            await session.cancel()

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        await self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        options = await self._session(session_id).set_config(config_id, value)
        return SetSessionConfigOptionResponse(config_options=options)

    async def cancel_all(self) -> None:
        """End every session's running prompt (Peri is stopping)."""
        for session in list(self.sessions.values()):
            try:
                await session.cancel()
            except Exception:
                log.exception("cancelling a session's prompt failed")

    async def close(self) -> None:
        for session in list(self.sessions.values()):
            try:
                await session.close()
            except Exception:
                log.exception("closing a session failed")
        self.sessions.clear()
