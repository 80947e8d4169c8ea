"""Bash: run a shell command in the workspace, in its own process group."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, Field

from peri_cli.base.tool import PydanticTool, ToolContext, ToolKind, ToolOutput

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
TAIL_CHARS = 30_000
# Enough bytes to hold TAIL_CHARS characters of any UTF-8 text.
_TAIL_BYTES = TAIL_CHARS * 4
# After the shell exits, how long to wait for output still in flight before giving up on the pipe.
_DRAIN_SECONDS = 0.5
# How often to look whether a signalled process group is gone.
_POLL_SECONDS = 0.02
# How long to wait for SIGKILLed processes to be gone.
_KILL_WAIT_SECONDS = 1.0
# A running command's output goes to the UI at most this often, its last this many characters.
PROGRESS_SECONDS = 0.25
PROGRESS_CHARS = 4000


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


def _group_alive(pgid: int) -> bool:
    """Whether a live process (not a zombie) is still in the process group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # kill() counts zombies too (orphans a non-reaping init never collects); Linux says more.
    try:
        entries = os.scandir("/proc")
    except OSError:
        return True
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
                return True
    return False


def _end_group_now(pgids: list[int], grace: float) -> None:
    """SIGTERM each group, wait up to `grace` seconds for them to go, SIGKILL what is left."""
    live = [g for g in pgids if _group_alive(g)]
    try:
        for pgid in live:
            _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(_group_alive(g) for g in live) and time.monotonic() < deadline:
            time.sleep(_POLL_SECONDS)
    finally:
        for pgid in live:
            if _group_alive(pgid):
                _signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + _KILL_WAIT_SECONDS  # SIGKILL is delivered, not instant
    while any(_group_alive(g) for g in live) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)


@dataclass(eq=False)
class _Job:
    """A background command. Its shell is waited for without being reaped (`waitid` with
    WNOWAIT), so the shell's pid, which is the group id, cannot be reused by an unrelated process
    before the group is ended: signalling the group stays safe after the shell exits."""

    proc: subprocess.Popen[bytes]
    exited: threading.Event = field(default_factory=threading.Event)
    reaped: bool = False

    @property
    def pgid(self) -> int:
        return self.proc.pid

    def wait_unreaped(self) -> int | None:
        """Block until the shell exits and return its status, leaving it unreaped if possible."""
        if not hasattr(os, "waitid"):
            self.reaped = True
            return self.proc.wait()
        try:
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:  # reaped meanwhile by terminate_background
            return self.proc.returncode
        if info is None:
            return None
        if info.si_code == os.CLD_EXITED:
            return info.si_status
        return -info.si_status

    def release(self) -> None:
        """Reap the shell (once its group is ended or empty)."""
        with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
            self.proc.wait(timeout=1.0)
        self.reaped = True
        _JOBS.discard(self)


# Every background command not yet released, whichever BashTool started it (a SubAgent's, or
# one dropped with its agent), so that Peri's exit ends them all; the exit hook is registered
# by the first background command.
_JOBS: set[_Job] = set()
_exit_hook_registered = False


def _track(job: _Job) -> None:
    global _exit_hook_registered
    _JOBS.add(job)
    if not _exit_hook_registered:
        atexit.register(_terminate_all)
        _exit_hook_registered = True


def _terminate_all(grace: float = 2.0) -> None:
    jobs = list(_JOBS)
    _end_group_now([j.pgid for j in jobs if not j.reaped], grace)
    for job in jobs:
        job.release()


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

    def tail(self, chars: int) -> str:
        """The last `chars` characters of the output so far (for live progress)."""
        return self._buffer[-chars * 4 :].decode("utf-8", errors="replace")[-chars:]

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
        self._background: list[_Job] = []

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
        """End the process groups of background commands, what their shells started included
        (call at session end; Peri's exit calls it too). SIGTERM, then SIGKILL after the grace."""
        jobs, self._background = self._background, []
        _end_group_now([j.pgid for j in jobs if not j.reaped], self._kill_grace)
        for job in jobs:
            job.release()

    async def _run(
        self, command: str, timeout_ms: int, ctx: ToolContext, notes: list[str]
    ) -> ToolOutput:
        capture = _Capture(_side_file(ctx))
        loop = asyncio.get_running_loop()
        spawn = asyncio.ensure_future(
            loop.subprocess_exec(
                lambda: _Shell(capture),
                "bash",
                "-c",
                command,
                cwd=ctx.workspace,
                env=dict(ctx.env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        try:
            # Shielded: cancelled while the pipes connect, asyncio would kill only the shell,
            # and what it had started already would live on.
            transport, shell = await asyncio.shield(spawn)
        except OSError as e:
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {e.strerror or e}.")
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                transport, _ = await spawn
                await self._end_group(transport.get_pid())
                transport.close()
            raise
        # start_new_session makes the shell a session and group leader: its pid is the group id.
        pgid = transport.get_pid()
        live = asyncio.ensure_future(_stream_progress(capture, ctx))
        try:
            try:
                await asyncio.wait_for(asyncio.shield(shell.exited), timeout_ms / 1000)
            except TimeoutError:
                await self._end_group(pgid)
                await asyncio.wait([shell.exited, shell.pipe_closed], timeout=1.0)
                body = capture.finish() or "(no output)"
                return ToolOutput.error(
                    f"Command timed out after {timeout_ms} ms; it and its child processes were "
                    f"killed. If it needs longer, pass a larger timeout (max {MAX_TIMEOUT_MS}) or "
                    f"use run_in_background.\nOutput before the timeout:\n{body}"
                )
            except asyncio.CancelledError:
                await self._end_group(pgid)
                raise
            # What the command left running in its group (`server &`) would outlive Peri: end it.
            left_running = await self._end_group(pgid)
            # Processes outside the group (setsid) may keep the pipe open; don't wait on them.
            await asyncio.wait([shell.pipe_closed], timeout=_DRAIN_SECONDS)
            returncode = transport.get_returncode()
        finally:
            live.cancel()
            transport.close()
        report = _report(capture, returncode, notes, shell.pipe_closed.done(), left_running)
        return ToolOutput.text(report)

    async def _end_group(self, pgid: int) -> bool:
        """SIGTERM the group, give it the grace period to exit, then SIGKILL what is left.
        False when nothing in it was alive."""
        if not _group_alive(pgid):
            return False
        loop = asyncio.get_running_loop()
        try:
            _signal_group(pgid, signal.SIGTERM)
            deadline = loop.time() + self._kill_grace
            while _group_alive(pgid) and loop.time() < deadline:
                await asyncio.sleep(_POLL_SECONDS)
        finally:
            if _group_alive(pgid):
                _signal_group(pgid, signal.SIGKILL)
        deadline = loop.time() + _KILL_WAIT_SECONDS  # SIGKILL is delivered, not instant
        while _group_alive(pgid) and loop.time() < deadline:
            await asyncio.sleep(_POLL_SECONDS)
        return True

    def _start_background(self, command: str, ctx: ToolContext) -> ToolOutput:
        self._release_finished()
        out_path = _side_file(ctx)
        try:
            out_path.parent.mkdir(parents=True, exist_ok=True)
            with out_path.open("ab") as out:
                proc = subprocess.Popen(
                    ["bash", "-c", command],
                    cwd=ctx.workspace,
                    env=dict(ctx.env),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        except OSError as e:
            return ToolOutput.error(f"Could not start bash in {ctx.workspace}: {e.strerror or e}.")
        job = _Job(proc)
        self._background.append(job)
        _track(job)
        threading.Thread(target=_watch, args=(job, out_path), daemon=True).start()
        return ToolOutput.text(
            f"Started in the background with pid {proc.pid} (also its process group id).\n"
            f"Its output goes to {out_path}; Read that file to check progress. A line "
            f"'[exit code N]' is appended when the command finishes. To stop it early, run "
            f"`kill -TERM -{proc.pid}` with Bash. It is stopped when Peri exits."
        )

    def _release_finished(self) -> None:
        """Reap background shells that have exited and left nothing running in their group."""
        done = [j for j in self._background if j.exited.is_set() and not _group_alive(j.pgid)]
        for job in done:
            job.release()
            self._background.remove(job)


async def _stream_progress(capture: _Capture, ctx: ToolContext) -> None:
    """Report the output's tail while the command runs, when it has grown (throttled)."""
    if ctx.progress is None:
        return
    seen = 0
    while True:
        await asyncio.sleep(PROGRESS_SECONDS)
        if capture.total_bytes != seen:
            seen = capture.total_bytes
            ctx.report(capture.tail(PROGRESS_CHARS))


def _watch(job: _Job, out_path: Path) -> None:
    """Wait for a background command's shell and record how it ended."""
    returncode = job.wait_unreaped()
    with contextlib.suppress(OSError), out_path.open("a", encoding="utf-8") as out:
        out.write(f"\n[exit code {returncode}]\n")
    job.exited.set()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _report(
    capture: _Capture,
    returncode: int | None,
    notes: list[str],
    pipe_closed: bool,
    left_running: bool,
) -> str:
    parts = [*notes, capture.finish().rstrip("\n") or "(no output)"]
    if left_running:
        parts.append(
            "[The command left processes running in the background; they were stopped when it "
            "finished. Use run_in_background for a process that must keep running.]"
        )
    if not pipe_closed:
        parts.append(
            "[Processes the command started outside its process group still hold its output; "
            "their later output is not captured.]"
        )
    if returncode is not None and returncode < 0:
        parts.append(f"Killed by signal {_signal_name(-returncode)}")
    elif returncode:
        parts.append(f"Exit code: {returncode}")
    return "\n".join(parts)
