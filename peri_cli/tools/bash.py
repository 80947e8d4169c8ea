"""Bash: run a shell command in the workspace, in its own process group."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import subprocess
import threading
import uuid
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, Field

from peri_cli.core.tools import PydanticTool, ToolContext, ToolKind, ToolOutput

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
TAIL_CHARS = 30_000
# Enough bytes to hold TAIL_CHARS characters of any UTF-8 text.
_TAIL_BYTES = TAIL_CHARS * 4
# After the shell exits, how long to wait for output still in flight before giving up on the pipe.
_DRAIN_SECONDS = 0.5


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class BashParams(BaseModel):
    command: str = Field(
        description="The command to run with `bash -c`, in the workspace directory."
    )
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=f"Timeout in ms (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).",
    )
    run_in_background: bool = Field(
        default=False,
        description="Start the command detached and return at once with its pid and output file.",
    )


def _side_file(ctx: ToolContext) -> Path:
    return ctx.session_dir / "outputs" / f"{uuid.uuid4().hex}.txt"


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _Capture:
    """Holds output in memory while small; once large, spills it to a side file, keeps a tail."""

    def __init__(self, side_file: Path) -> None:
        self._side_file = side_file
        self._buffer = bytearray()  # all output until spilled, then only its tail
        self._file: BinaryIO | None = None
        self._spill_error: str | None = None
        self.total_bytes = 0
        self.total_lines = 0

    @property
    def spilled(self) -> bool:
        return self._file is not None or self._spill_error is not None

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.total_lines += data.count(b"\n")
        if self._file is not None:
            self._file.write(data)
        self._buffer += data
        if not self.spilled and len(self._buffer) > _TAIL_BYTES:
            self._spill()
        if self.spilled and len(self._buffer) > 2 * _TAIL_BYTES:
            del self._buffer[:-_TAIL_BYTES]

    def _spill(self) -> None:
        try:
            self._side_file.parent.mkdir(parents=True, exist_ok=True)
            self._file = self._side_file.open("wb")
            self._file.write(self._buffer)
        except OSError as e:
            self._spill_error = f"the full output could not be saved: {e.strerror or e}"

    def finish(self) -> str:
        """The text for the model: all output, or a note on where it all is plus the tail."""
        text = self._buffer.decode("utf-8", errors="replace")
        if not self.spilled:
            if len(text) <= TAIL_CHARS:
                return text
            self._spill()
        if self._file is not None:
            self._file.close()
        where = self._spill_error or (
            f"the full output is in {self._side_file} (Read it with offset/limit, or Grep it)"
        )
        tail = text[-TAIL_CHARS:]
        first_break = tail.find("\n", 0, 1000)
        if text[-TAIL_CHARS - 1 : -TAIL_CHARS] != "\n" and first_break != -1:
            tail = tail[first_break + 1 :]  # start at a whole line
        note = (
            f"[Output was {self.total_lines} lines, {self.total_bytes} bytes; showing only the "
            f"last {len(tail)} characters; {where}.]\n"
        )
        return note + tail


class _Shell(asyncio.SubprocessProtocol):
    """Feeds merged stdout/stderr to a capture; signals the shell's exit and the pipe's close."""

    def __init__(self, capture: _Capture) -> None:
        loop = asyncio.get_running_loop()
        self.capture = capture
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipe_closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.capture.feed(data.encode() if isinstance(data, str) else data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.pipe_closed.done():
            self.pipe_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


class BashTool(PydanticTool[BashParams]):
    name = "Bash"
    kind: ToolKind = "execute"
    params = BashParams

    def __init__(self, *, kill_grace: float = 2.0) -> None:
        """`kill_grace`: seconds between SIGTERM and SIGKILL when stopping a command."""
        self._kill_grace = kill_grace
        self._background: list[subprocess.Popen[bytes]] = []

    def description(self) -> str:
        return _description()

    async def call(self, params: BashParams, ctx: ToolContext) -> ToolOutput:
        p = params
        if p.run_in_background:
            return self._start_background(p.command, ctx)
        timeout_ms = p.timeout or DEFAULT_TIMEOUT_MS
        notes = []
        if timeout_ms > MAX_TIMEOUT_MS:
            notes.append(f"[timeout {timeout_ms} ms clamped to the maximum, {MAX_TIMEOUT_MS} ms]")
            timeout_ms = MAX_TIMEOUT_MS
        return await self._run(p.command, timeout_ms, ctx, notes)

    def terminate_background(self) -> None:
        """Kill the process groups of background commands still running (call at session end)."""
        for proc in self._background:
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
        self._background.clear()

    async def _run(
        self, command: str, timeout_ms: int, ctx: ToolContext, notes: list[str]
    ) -> ToolOutput:
        capture = _Capture(_side_file(ctx))
        loop = asyncio.get_running_loop()
        try:
            transport, shell = await loop.subprocess_exec(
                lambda: _Shell(capture),
                "bash",
                "-c",
                command,
                cwd=ctx.workspace,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as e:
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {e.strerror or e}.")
        # start_new_session makes the shell a session and group leader: its pid is the group id.
        pgid = transport.get_pid()
        try:
            try:
                await asyncio.wait_for(asyncio.shield(shell.exited), timeout_ms / 1000)
            except TimeoutError:
                await self._stop_group(pgid, shell)
                body = capture.finish() or "(no output)"
                return ToolOutput.error(
                    f"Command timed out after {timeout_ms} ms; it and its child processes were "
                    f"killed. If it needs longer, pass a larger timeout (max {MAX_TIMEOUT_MS}) or "
                    f"use run_in_background.\nOutput before the timeout:\n{body}"
                )
            except asyncio.CancelledError:
                await self._stop_group(pgid, shell)
                raise
            # Background children the command started may keep the pipe open; don't wait on them.
            await asyncio.wait([shell.pipe_closed], timeout=_DRAIN_SECONDS)
            returncode = transport.get_returncode()
        finally:
            transport.close()
        return ToolOutput.text(_report(capture, returncode, notes, shell.pipe_closed.done()))

    async def _stop_group(self, pgid: int, shell: _Shell) -> None:
        """SIGTERM the whole group, give it a grace period to exit, then SIGKILL what is left."""
        try:
            _signal_group(pgid, signal.SIGTERM)
            # The pipe closes once every process still holding it has exited.
            await asyncio.wait([shell.exited, shell.pipe_closed], timeout=self._kill_grace)
        finally:
            _signal_group(pgid, signal.SIGKILL)
        await asyncio.wait([shell.exited, shell.pipe_closed], timeout=1.0)

    def _start_background(self, command: str, ctx: ToolContext) -> ToolOutput:
        out_path = _side_file(ctx)
        try:
            out_path.parent.mkdir(parents=True, exist_ok=True)
            with out_path.open("ab") as out:
                proc = subprocess.Popen(
                    ["bash", "-c", command],
                    cwd=ctx.workspace,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        except OSError as e:
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {e.strerror or e}.")
        self._background.append(proc)
        threading.Thread(target=_reap, args=(proc, out_path), daemon=True).start()
        return ToolOutput.text(
            f"Started in the background with pid {proc.pid} (also its process group id).\n"
            f"Its output goes to {out_path}; Read that file to check progress. A line "
            f"'[exit code N]' is appended when the command finishes. To stop it early, run "
            f"`kill -TERM -{proc.pid}` with Bash."
        )


def _reap(proc: subprocess.Popen[bytes], out_path: Path) -> None:
    """Wait for a background command (so it leaves no zombie) and record how it ended."""
    returncode = proc.wait()
    with contextlib.suppress(OSError), out_path.open("a", encoding="utf-8") as out:
        out.write(f"\n[exit code {returncode}]\n")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _report(capture: _Capture, returncode: int | None, notes: list[str], pipe_closed: bool) -> str:
    parts = [*notes, capture.finish().rstrip("\n") or "(no output)"]
    if not pipe_closed:
        parts.append(
            "[Background processes started by the command still hold its output; "
            "their later output is not captured.]"
        )
    if returncode is not None and returncode < 0:
        parts.append(f"Killed by signal {_signal_name(-returncode)}")
    elif returncode:
        parts.append(f"Exit code: {returncode}")
    return "\n".join(parts)
