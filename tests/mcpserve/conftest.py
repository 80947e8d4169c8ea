"""`peri mcp serve` as a real subprocess, driven by the official `mcp` SDK's own client over
stdio, against the loopback fake model server; one workspace, HOME and PERI_HOME per test."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.client import ConnectMode
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.conftest import Peri
from tests.fakeserver import FakeServer


@dataclass
class Asked:
    """The test client's elicitation answers (queued contents to accept; None: decline) and
    what it was asked."""

    answers: list[dict[str, Any] | None] = field(default_factory=list)
    asked: list[types.ElicitRequestParams] = field(default_factory=list)

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        content = self.answers.pop(0) if self.answers else None
        if content is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=content)


def params(peri: Peri, *flags: str, cwd: Path | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "peri_cli", "mcp", "serve", *flags],
        env=peri.env(),
        cwd=str(cwd or peri.workspace),
    )


@asynccontextmanager
async def serving(
    peri: Peri,
    *flags: str,
    asked: Asked | None = None,
    cwd: Path | None = None,
    mode: ConnectMode = "auto",
) -> AsyncIterator[Client]:
    """`peri mcp serve` started and initialized; its stderr goes to a file beside the workspace.
    `mode`: "auto" speaks MCP 2026-07-28 (questions ride `InputRequiredResult` rounds),
    "legacy" the initialize handshake (questions are `elicitation/create` requests)."""
    with (peri.workspace.parent / "mcp-stderr.log").open("a") as log:
        transport = stdio_client(params(peri, *flags, cwd=cwd), errlog=log)
        async with Client(transport, elicitation_callback=asked, mode=mode) as client:
            yield client


def stderr_of(peri: Peri) -> str:
    path = peri.workspace.parent / "mcp-stderr.log"
    return path.read_text() if path.exists() else ""


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
