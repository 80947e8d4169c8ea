"""A command's saved output, the side file its result points to: in the session's folder (so it
lives and is deleted with the session), at most MAX_SIDE_FILE_BYTES, past which the rest is
dropped and a note at its end says so. A side file asked for after it is gone is named as one."""

from __future__ import annotations

import os
import re
import threading
import uuid
from pathlib import Path
from typing import BinaryIO

MAX_SIDE_FILE_BYTES = 64 << 20  # CONTRACT §4: at most 64 MB each
# Room kept at the end for the notes (the cut, a background command's exit code).
_NOTES_ROOM = 4096
DROPPED_NOTE = (
    "\n[Peri saved no more of this output: a command's saved output is cut at "
    f"{MAX_SIDE_FILE_BYTES >> 20} MiB, and the rest was dropped.]\n"
)
_NAME = re.compile(r"(mcp-)?[0-9a-f]{32}\.txt")


def new_side_file(session_dir: Path) -> Path:
    return session_dir / "outputs" / f"{uuid.uuid4().hex}.txt"


def gone_note(path: Path) -> str | None:
    """What to tell a model asking for a side file that is not there (None: not a side file)."""
    if path.parent.name != "outputs" or not _NAME.fullmatch(path.name):
        return None
    return (
        f"{path} was the saved output of an earlier command (or tool), kept with its session; it "
        "is no longer there: it was deleted with the session's data, or this session was resumed "
        "where it was never saved. Run the command again if you need its output."
    )


class SideFile:
    """Writes a command's output to `path` up to the cap, then counts what it drops. A
    background command's relay thread and its watcher (which adds the exit line) share one
    (`share`): it closes when each owner has released it."""

    def __init__(self, path: Path, cap: int = MAX_SIDE_FILE_BYTES) -> None:
        self.path = path
        self._room = cap - _NOTES_ROOM
        self._file: BinaryIO | None = None
        self._owners = 1
        self._lock = threading.Lock()
        self.saved = 0
        self.dropped = 0
        self.error: str | None = None

    def open(self) -> bool:
        """Create the file (its folder too); False, with `error` set, when it cannot be."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("wb", buffering=0)
        except OSError as e:
            self.error = f"the full output could not be saved: {e.strerror or e}"
            return False
        return True

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._file is None:
                return
            if self.dropped:
                self.dropped += len(data)
                return
            keep = min(len(data), self._room - self.saved)
            self._put(data[:keep])
            self.saved += keep
            if keep < len(data):
                self.dropped = len(data) - keep
                self._put(DROPPED_NOTE.encode())

    def append_note(self, text: str) -> None:
        """A line of Peri's own after the output (a background command's exit code)."""
        with self._lock:
            self._put(text.encode("utf-8", errors="replace"))

    def share(self) -> None:
        with self._lock:
            self._owners += 1

    def release(self) -> None:
        with self._lock:
            self._owners -= 1
            if self._owners <= 0 and self._file is not None:
                self._file.close()
                self._file = None

    def _put(self, data: bytes) -> None:
        if self._file is None or not data:
            return
        try:
            view = memoryview(data)
            while view:  # an unbuffered write may take only part
                view = view[self._file.write(view) or 0 :]
        except OSError as e:  # a full disk: the command runs on, its output is not saved on
            self.error = f"saving the full output stopped: {e.strerror or e}"
            self._file.close()
            self._file = None


def relay(fd: int, side: SideFile) -> None:
    """Copy a background command's output from the read end of its pipe to its side file until
    every writer has closed the pipe (past the cap it is read and dropped, so it never blocks)."""
    try:
        while chunk := os.read(fd, 1 << 16):
            side.write(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
        side.release()
