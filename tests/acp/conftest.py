"""`peri acp` as a real subprocess, driven by the `acp` SDK's own client side, against the
loopback fake model server; one workspace and PERI_HOME per test."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.e2e.conftest import Peri
from tests.fakeserver import FakeServer


@dataclass
class Editor:
    """The test's ACP client: it records every update and answers permission questions with
    the option ids queued in `answers` ("cancel": the question is cancelled)."""

    answers: list[str] = field(default_factory=list)
    asked: list[dict[str, Any]] = field(default_factory=list)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    buffers: dict[str, str] = field(default_factory=dict)  # unsaved editor buffers
    writes: list[tuple[str, str]] = field(default_factory=list)
    write_gate: asyncio.Event | None = None  # fs/write_text_file waits for it when set
    write_started: asyncio.Event = field(default_factory=asyncio.Event)
    # elicitation/create: the form contents queued to accept (None: decline); what was asked
    forms: list[dict[str, Any] | None] = field(default_factory=list)
    elicited: list[dict[str, Any]] = field(default_factory=list)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.elicited.append({"message": message, "mode": mode})
        content = self.forms.pop(0) if self.forms else None
        if content is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content=content)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append({"tool_call": tool_call, "options": options})
        answer = self.answers.pop(0) if self.answers else "reject_once"
        if answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if answer == "hang":
            await asyncio.Event().wait()
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.write_started.set()
        if self.write_gate is not None:
            await self.write_gate.wait()
        self.writes.append((path, content))
        Path(path).write_text(content)  # the editor saves the buffer
        return WriteTextFileResponse()

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))

    def clear(self) -> None:
        self.updates.clear()


@asynccontextmanager
async def running(
    peri: Peri, editor: Editor, *flags: str, fs: bool = False, forms: bool = False
) -> AsyncIterator[ClientSideConnection]:
    """`peri acp` started and initialized; stderr goes to a file beside the workspace."""
    async with running_process(peri, editor, *flags, fs=fs, forms=forms) as (conn, _process):
        yield conn


@asynccontextmanager
async def running_process(
    peri: Peri, editor: Editor, *flags: str, fs: bool = False, forms: bool = False
) -> AsyncIterator[tuple[ClientSideConnection, Any]]:
    """`running`, with the `peri acp` process beside the connection."""
    log = (peri.workspace.parent / "acp-stderr.log").open("ab")
    try:
        async with spawn_agent_process(
            editor,
            sys.executable,
            "-m",
            "peri_cli",
            "acp",
            *flags,
            env=peri.env(),
            cwd=peri.workspace,
            transport_kwargs={"stderr": log.fileno()},
            # (the acp package routes elicitation/create only with its "unstable" switch)
            use_unstable_protocol=forms,
        ) as (conn, process):
            caps = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
                if forms
                else None,
            )
            await asyncio.wait_for(
                conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps), 30
            )
            yield conn, process
    finally:
        log.close()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def peri(server: FakeServer, tmp_path: Path) -> Peri:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    return Peri(server=server, workspace=workspace, home=tmp_path / "home")


@pytest.fixture
def editor() -> Editor:
    return Editor()
