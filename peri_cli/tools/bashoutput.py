"""What a command printed and what the model reads of it: all of it while small, else a note on
the side file holding it all and the tail; the tail as live progress; the exit code or signal
and what was left running."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from peri_cli.base.tool import ToolContext
from peri_cli.tools.sidefile import MAX_SIDE_FILE_BYTES, SideFile

TAIL_CHARS = 30_000
# Enough bytes to hold TAIL_CHARS characters of any UTF-8 text.
_TAIL_BYTES = TAIL_CHARS * 4
# A running command's output goes to the UI at most this often, its last this many characters.
PROGRESS_SECONDS = 0.25
PROGRESS_CHARS = 4000


class Capture:
    """Holds output in memory while small; once large, spills it to a side file (up to its cap),
    keeps a tail."""

    def __init__(self, side_file: Path) -> None:
        self._side = SideFile(side_file)
        self._buffer = bytearray()  # all output until spilled, then only its tail
        self.spilled = False
        self.total_bytes = 0
        self.total_lines = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.total_lines += data.count(b"\n")
        if self.spilled:
            self._side.write(data)
        self._buffer += data
        if not self.spilled and len(self._buffer) > _TAIL_BYTES:
            self._spill()
        if self.spilled and len(self._buffer) > 2 * _TAIL_BYTES:
            del self._buffer[:-_TAIL_BYTES]

    def tail(self, chars: int) -> str:
        """The last `chars` characters of the output so far (for live progress)."""
        return self._buffer[-chars * 4 :].decode("utf-8", errors="replace")[-chars:]

    def _spill(self) -> None:
        self.spilled = True
        if self._side.open():
            self._side.write(bytes(self._buffer))

    def finish(self) -> str:
        """The text for the model: all output, or a note on where it all is plus the tail."""
        text = self._buffer.decode("utf-8", errors="replace")
        if not self.spilled:
            if len(text) <= TAIL_CHARS:
                return text
            self._spill()
        self._side.release()
        tail = text[-TAIL_CHARS:]
        first_break = tail.find("\n", 0, 1000)
        if text[-TAIL_CHARS - 1 : -TAIL_CHARS] != "\n" and first_break != -1:
            tail = tail[first_break + 1 :]  # start at a whole line
        note = (
            f"[Output was {self.total_lines} lines, {self.total_bytes} bytes; showing only the "
            f"last {len(tail)} characters; {self._where()}.]\n"
        )
        return note + tail

    def _where(self) -> str:
        side = self._side
        how = "Read it with offset/limit, or Grep it"
        if side.error and not side.saved:
            return side.error
        if side.error:
            return f"{side.error}; what was saved is in {side.path} ({how})"
        if side.dropped:
            return (
                f"its first {side.saved} bytes are in {side.path} ({how}); a saved output "
                f"keeps up to {MAX_SIDE_FILE_BYTES >> 20} MiB, so the other {side.dropped} "
                "bytes were not saved"
            )
        return f"the full output is in {side.path} ({how})"


async def stream_progress(capture: Capture, ctx: ToolContext) -> None:
    """Report the output's tail while the command runs, when it has grown (throttled)."""
    if ctx.progress is None:
        return
    seen = 0
    while True:
        await asyncio.sleep(PROGRESS_SECONDS)
        if capture.total_bytes != seen:
            seen = capture.total_bytes
            ctx.report(capture.tail(PROGRESS_CHARS))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def report(
    capture: Capture,
    returncode: int | None,
    notes: list[str],
    pipe_closed: bool,
    *,
    left: int,
    survivors: int = 0,
) -> str:
    """The result: output, what was left running and stopped (`left` processes, `survivors` of
    them not: another user's), the exit code or signal."""
    parts = [*notes, capture.finish().rstrip("\n") or "(no output)"]
    if left > survivors:
        parts.append(
            "[The command left processes running in the background; they were stopped when it "
            "finished. Use run_in_background for a process that must keep running.]"
        )
    if survivors:
        parts.append(
            f"[{survivors} of the processes it left running could not be stopped (they run as "
            "another user) and may still be running.]"
        )
    if not pipe_closed:
        parts.append(
            "[A process that Peri could not stop still holds the command's output; its later "
            "output is not captured.]"
        )
    if returncode is not None and returncode < 0:
        parts.append(f"Killed by signal {_signal_name(-returncode)}")
    elif returncode:
        parts.append(f"Exit code: {returncode}")
    return "\n".join(parts)
