"""Reading a SKILL.md found in a folder that may come from a cloned repository: only regular
files, with a size cap, confined to the workspace for a project skill, and every failure a
one-line reason."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from peri_cli.base.frontmatter import FrontMatterError
from peri_cli.base.safe_read import is_inside, resolved
from peri_cli.extensions.skills.catalog import MAX_SKILL_BYTES

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)

# Every refusal while reading a skill, the front matter's own included.
Refused = FrontMatterError


def read_skill_file(path: Path, inside: Path | None, *, limit: int) -> bytes:
    """A SKILL.md's first `limit` bytes; with `inside`, only if it resolves inside that folder,
    and the resolved file is what is opened (a symlink swapped in later is not followed)."""
    if inside is None:
        return _read_regular(path, limit=limit, file_cap=MAX_SKILL_BYTES)
    real = resolved(path)
    if not is_inside(real, inside):
        raise Refused(f"resolves outside the workspace (to {real}); not read")
    return _read_regular(real, limit=limit, file_cap=MAX_SKILL_BYTES, nofollow=True)


def _read_regular(path: Path, *, limit: int, file_cap: int, nofollow: bool = False) -> bytes:
    """At most `limit` bytes of the regular file `path`, refused unread if over `file_cap`:
    discovery reads only the front matter, which `safe_read.read_bytes` (whole files) cannot.

    TODO: a prefix option in `peri_cli.base.safe_read` would let this go.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS | (getattr(os, "O_NOFOLLOW", 0) if nofollow else 0))
    except OSError as e:
        raise Refused(os_reason(e, path)) from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO, socket or device"
            raise Refused(f"is {kind}, not a regular file; not read")
        if st.st_size > file_cap:
            raise Refused(f"is larger than {file_cap // 1024} KiB ({st.st_size} bytes); not read")
        chunks: list[bytes] = []
        total = 0
        while total < limit and (chunk := os.read(fd, min(1 << 16, limit - total))):
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise Refused(os_reason(e, path)) from e
    finally:
        os.close(fd)


def os_reason(e: OSError, path: Path) -> str:
    if e.errno == errno.ELOOP:
        return "symlink loop"
    if isinstance(e, FileNotFoundError):
        return "broken symlink" if os.path.islink(path) else "file not found"
    if isinstance(e, PermissionError):
        return "permission denied"
    if e.errno == errno.ENXIO:
        return "is a socket or device, not a regular file; not read"
    return f"cannot read ({e.strerror or e})"
