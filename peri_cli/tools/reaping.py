"""Peri's side of the reaper (`reaper.py`, the helper process that starts Bash's commands and ends
what they leave): the helper, started with the first command and again if it died, and each
command started through it, with the status its keeper reports and the pipe that stops it.

The control pipe's write end is held only here: when Peri exits or is killed, the kernel closes
it and every keeper ends its command's whole tree."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.childenv import child_env

REAPER = Path(__file__).with_name("reaper.py")


class _Helper:
    """The one reaper process of this Peri process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def send(self, fds: list[int]) -> None:
        """Hand a request's descriptors to the helper (OSError: it cannot be started)."""
        with self._lock:
            for attempt in (1, 2):
                sock = self._sock or self._start()
                try:
                    socket.send_fds(sock, [b"run"], fds)
                    return
                except OSError:
                    self._drop()  # it died (killed by a command?): start another, once
                    if attempt == 2:
                        raise

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's Ctrl+C is not for it
                env=child_env(os.environ),  # (a command can read its keeper's /proc/PID/environ)
            )
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        self._sock = ours
        return ours

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=1.0)
            self._proc = None


_HELPER = _Helper()


@dataclass
class Status:
    """What a command's keeper has said so far."""

    pid: int | None = None
    failure: OSError | None = None
    code: int | None = None  # the shell's exit code; negative: the signal that ended it
    left: int = 0  # processes it left running, found when it was ended
    survivors: int = 0  # of those, the ones that could not be ended
    ended: bool = False

    def feed(self, line: str) -> None:
        word, _, rest = line.strip().partition(" ")
        values = rest.split(" ", 1)
        if word == "started":
            self.pid = int(values[0])
        elif word == "failed":
            self.failure = OSError(int(values[0]), values[1] if len(values) > 1 else "")
        elif word == "exited":
            self.code = int(values[0])
        elif word == "ended":
            self.left, self.survivors = (int(v) for v in rest.split())
            self.ended = True

    def gone(self) -> None:
        """The keeper's pipe closed: whatever was not said will not be."""
        if self.pid is None and self.failure is None:
            self.failure = OSError(0, "the command's keeper process ended before it started")
        self.ended = True


@dataclass(eq=False)
class Command:
    """A command started through the reaper: its status pipe (read here) and control pipe."""

    status_fd: int
    control_fd: int
    status: Status = field(default_factory=Status)
    _buffer: bytes = b""
    # stop() and close() come from different threads (Peri's exit, a job's watcher): a closed
    # descriptor's number may be reused at once, so it is never written after it is closed.
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def stop(self) -> None:
        """Ask its keeper to end it and all it started (SIGTERM, the grace, SIGKILL)."""
        with self._lock, contextlib.suppress(OSError):
            if self.control_fd >= 0:
                os.write(self.control_fd, b"s")

    def feed(self, data: bytes) -> None:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self.status.feed(line.decode(errors="replace"))

    def read_until(self, done: str, timeout: float | None = None) -> Status:
        """Block until the status says `done` ("started", "exited" or "ended") or the pipe
        closes (or `timeout` passes)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._said(done):
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.status_fd], [], [], wait)
            if not ready:
                break
            data = os.read(self.status_fd, 4096)
            if not data:
                self.status.gone()
                break
            self.feed(data)
        return self.status

    def _said(self, done: str) -> bool:
        s = self.status
        said = {
            "started": s.pid is not None or s.failure is not None,
            "exited": s.code is not None or s.failure is not None,
        }
        return s.ended or said.get(done, False)

    async def watch(self) -> tuple[asyncio.BaseTransport, StatusProtocol]:
        """Read the status on the running event loop from now on (the transport owns the pipe)."""
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(self.status_fd, "rb", buffering=0)
        self.status_fd = -1
        return await loop.connect_read_pipe(lambda: StatusProtocol(self), pipe)

    def close(self) -> None:
        """Let go of both pipes (closing the control pipe ends the command, if it still runs)."""
        with self._lock:
            for fd in (self.status_fd, self.control_fd):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self.status_fd = self.control_fd = -1


def start(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    out: int,
    *,
    grace: float,
    background: bool = False,
) -> Command:
    """Start `argv` in `cwd` through the reaper, stdout and stderr to the descriptor `out`. In
    the foreground its keeper ends what it left as soon as its shell exits; in the background
    only when told (`stop`) or when Peri is gone. OSError when the reaper cannot be started."""
    spec = {"argv": list(argv), "env": dict(env), "cwd": str(cwd), "grace": grace}
    status_r, status_w = os.pipe()
    control_r, control_w = os.pipe()
    try:
        with tempfile.TemporaryFile() as request:  # a file: a command line has no size limit
            request.write(json.dumps({**spec, "background": background}).encode())
            request.flush()
            request.seek(0)
            _HELPER.send([request.fileno(), out, status_w, control_r])
    except OSError:
        for fd in (status_r, control_w):
            os.close(fd)
        raise
    finally:
        os.close(status_w)
        os.close(control_r)
    return Command(status_r, control_w)


class StatusProtocol(asyncio.Protocol):
    """Feeds a command's status pipe, on an event loop, and wakes whoever waits on it."""

    def __init__(self, command: Command) -> None:
        self.command = command
        self.changed = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        self.command.feed(data)
        self.changed.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.command.status.gone()
        self.changed.set()

    async def until(self, done: str) -> Status:
        while not self.command._said(done):
            self.changed.clear()
            await self.changed.wait()
        return self.command.status
