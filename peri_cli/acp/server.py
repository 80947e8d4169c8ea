"""`peri acp`: the process. stdout carries JSON-RPC and nothing else: the real stdout is kept
for the transport and file descriptor 1 becomes stderr, so a stray print, a library's warning
or a child process that inherits it cannot corrupt the stream. Logs go to stderr.

SIGTERM and SIGHUP (an editor closing, a terminal going away) end every running turn (its
prompt is answered "cancelled"), stop every process of every session (a running command,
background commands, MCP servers) and exit with 128 + the signal's number."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import IO

from acp import AgentSideConnection

from peri_cli.acp.agent import PeriAgent
from peri_cli.acp.session import Launch
from peri_cli.acp.transport import LineTransport, one_error

log = logging.getLogger("peri.acp")

SIGNALS = (signal.SIGTERM, signal.SIGHUP)
UNHANDLED_NOTIFICATION = "Unhandled error while handling notification"  # (the acp package's)
ANSWER_WAIT = 5.0  # seconds the cancelled prompts have to be answered before Peri exits


class OneLineNotices(logging.Filter):
    """The acp package logs a notification it could not take (a malformed `session/cancel`)
    with a traceback; Peri says it in one line: the method and what was wrong with it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not (record.exc_info and str(record.msg).startswith(UNHANDLED_NOTIFICATION)):
            return True
        method = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
        record.msg, record.args = "ignored a malformed %s notification: %s", (method, _why(record))
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.name = log.name
        return True


def _why(record: logging.LogRecord) -> str:
    error = record.exc_info[1] if record.exc_info else None
    errors = getattr(error, "errors", None)
    if callable(errors):  # pydantic's ValidationError: each field and what is wrong
        try:
            return "; ".join(one_error(e) for e in errors()[:3])
        except Exception:
            pass
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


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
    for handler in logging.getLogger().handlers:
        handler.addFilter(OneLineNotices())
    wire = _claim_stdout()
    try:
        signum = asyncio.run(serve(launch, sys.stdin.buffer, wire))
    except KeyboardInterrupt:
        return 130
    return 128 + signum if signum else 0


async def serve(launch: Launch, reader: IO[bytes], writer: IO[bytes]) -> int:
    """Answer requests until stdin ends or a signal comes, then release every session; the
    signal's number (0: stdin ended)."""
    agent = PeriAgent(launch)
    transport = LineTransport(reader, writer)
    conn = AgentSideConnection(agent, transport, listening=False)
    got: list[int] = []

    async def stop(signum: int) -> None:
        await agent.cancel_all()  # each running prompt is answered "cancelled"
        await transport.answered(ANSWER_WAIT)
        transport.end()

    def on_signal(signum: int) -> None:
        if not got:
            log.warning("%s: ending every turn and session", signal.Signals(signum).name)
            got.append(signum)
            asyncio.get_running_loop().create_task(stop(signum))

    loop = asyncio.get_running_loop()
    for signum in SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, on_signal, signum)
    try:
        await conn.listen()
    finally:
        await agent.close()
        await conn.close()
    return got[0] if got else 0
