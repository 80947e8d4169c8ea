"""Writing a file so that no reader ever sees it half written, and a crash leaves the old one."""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import tempfile
from pathlib import Path

from peri_cli.base import file_watchers


@functools.cache
def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)  # the only portable way to read it is to set it
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write through a synced temp file in the same directory, so no reader sees a partial file.

    An existing file keeps its permission bits; a new one gets the usual 0o666 minus the umask
    (or `mode`, when given: e.g. 0o600 for a copy of someone's private file).
    """
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    file_watchers.after_write(path)  # Peri's own write: not a sandboxed command's plant
    with contextlib.suppress(OSError):  # make the rename itself durable; not possible everywhere
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
