"""`peri acp`: the process. stdout carries JSON-RPC and nothing else: the real stdout is kept
for the transport and file descriptor 1 becomes stderr, so a stray print, a library's warning
or a child process that inherits it cannot corrupt the stream. Logs go to stderr."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import IO

from acp import AgentSideConnection

from peri_cli.acp.agent import PeriAgent
from peri_cli.acp.session import Launch
from peri_cli.acp.transport import LineTransport

log = logging.getLogger("peri.acp")


def _claim_stdout() -> IO[bytes]:
    """The JSON-RPC stream on a private copy of fd 1; fd 1 itself now writes to stderr."""
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return wire


def run_acp(launch: Launch) -> int:
    level = os.environ.get("PERI_ACP_LOG", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="peri acp: %(levelname)s %(name)s: %(message)s",
    )
    wire = _claim_stdout()
    try:
        asyncio.run(serve(launch, sys.stdin.buffer, wire))
    except KeyboardInterrupt:
        return 130
    return 0


async def serve(launch: Launch, reader: IO[bytes], writer: IO[bytes]) -> None:
    """Answer requests until stdin ends, then release every session."""
    agent = PeriAgent(launch)
    transport = LineTransport(reader, writer)
    conn = AgentSideConnection(agent, transport, listening=False)
    try:
        await conn.listen()
    finally:
        await agent.close()
        await conn.close()
