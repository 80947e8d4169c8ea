"""The one guard for reading repository and config files: regular files only, a size cap, and
optionally a root the file must stay inside after symlinks.

Settings, guides and their imports, the trust record, skills, agent files and `.mcp.json` all read
through here, so a FIFO never blocks start-up, `/dev/zero` is never read, a huge file is refused
before it is loaded, and a symlink out of the workspace is caught in one place. The git state
of the branch line and compaction's re-read of files (`read_head`: a large file's start) too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

from peri_cli.base import file_watchers

MAX_CONFIG_BYTES = 1 << 20  # 1 MiB: far above any real settings or guide file

Problem = Literal[
    "missing", "not_regular", "too_large", "outside", "unreadable", "not_text", "held"
]

# Open flags: never wait for a FIFO's writer, never become a controlling terminal, never follow a
# symlink swapped into the final component after the path was resolved.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class SafeReadError(Exception):
    """A file that was not read; `problem` says why in a word, `reason` in a phrase for the user."""

    def __init__(self, path: Path, problem: Problem, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.problem = problem
        self.reason = reason

    @property
    def missing(self) -> bool:
        return self.problem == "missing"


def resolved(path: Path) -> Path:
    """`path` with every symlink and `..` resolved (missing tails kept as written)."""
    return Path(os.path.realpath(path))


def is_inside(path: Path, root: Path) -> bool:
    """Whether `path`, after symlinks, is `root` or below it (`root` resolved too)."""
    target, base = resolved(path), resolved(root)
    return target == base or base in target.parents


def read_bytes(
    path: Path, *, max_bytes: int = MAX_CONFIG_BYTES, inside: Path | None = None
) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes`; SafeReadError otherwise.

    With `inside`, a path that resolves (after symlinks) outside that directory is refused unread.
    """
    data, _ = _read(path, max_bytes, inside, whole=True)
    return data


def read_head(path: Path, max_bytes: int, *, inside: Path | None = None) -> tuple[bytes, bool]:
    """The first `max_bytes` bytes of the regular file `path` and whether there was more; a
    larger file is cut, not refused. SafeReadError for what `read_bytes` refuses otherwise."""
    return _read(path, max_bytes, inside, whole=False)


def _read(path: Path, max_bytes: int, inside: Path | None, *, whole: bool) -> tuple[bytes, bool]:
    real = resolved(path)
    if inside is not None and not is_inside(real, inside):
        raise SafeReadError(path, "outside", f"resolves outside {inside} (to {real})")
    if (held := file_watchers.before_read(real)) is not None:  # (held back by the sandbox)
        raise SafeReadError(path, "held", held)
    try:
        before = os.stat(real)
    except OSError as e:
        raise _os_error(path, e) from e
    _check_kind(path, before.st_mode)
    if whole:
        _check_size(path, before.st_size, max_bytes)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as e:
        raise _os_error(path, e) from e
    try:
        after = os.fstat(fd)
        # The file may have been swapped between stat and open: judge what was opened.
        _check_kind(path, after.st_mode)
        if whole:
            _check_size(path, after.st_size, max_bytes)
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 16, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as e:
        raise _os_error(path, e) from e
    finally:
        os.close(fd)
    if total > max_bytes and whole:  # it grew while being read
        _check_size(path, total, max_bytes)
    return b"".join(chunks)[:max_bytes], total > max_bytes


def read_text(path: Path, *, max_bytes: int = MAX_CONFIG_BYTES, inside: Path | None = None) -> str:
    """`read_bytes` decoded as UTF-8 text (a leading BOM dropped); binary content is refused."""
    data = read_bytes(path, max_bytes=max_bytes, inside=inside)
    if b"\x00" in data:
        raise SafeReadError(path, "not_text", "binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SafeReadError(path, "not_text", "not valid UTF-8") from e
    return text.removeprefix("\ufeff")


def _check_kind(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise SafeReadError(path, "not_regular", "is a directory, not a file")
    kind = (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a special file"
    )
    raise SafeReadError(path, "not_regular", f"is {kind}, not a regular file; not read")


def _check_size(path: Path, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise SafeReadError(
            path, "too_large", f"is larger than {_size(max_bytes)} ({_size(size)}); not read"
        )


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} bytes"


def _os_error(path: Path, e: OSError) -> SafeReadError:
    if isinstance(e, FileNotFoundError | NotADirectoryError):
        return SafeReadError(path, "missing", "file not found")
    if isinstance(e, IsADirectoryError):
        return SafeReadError(path, "not_regular", "is a directory, not a file")
    if isinstance(e, PermissionError):
        return SafeReadError(path, "unreadable", "permission denied")
    if e.errno == errno.ELOOP:
        return SafeReadError(path, "unreadable", "symlink loop")
    if e.errno == errno.ENXIO:
        return SafeReadError(path, "not_regular", "is a socket or device, not a regular file")
    return SafeReadError(path, "unreadable", f"cannot read ({e.strerror or e})")
