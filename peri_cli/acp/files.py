"""The editor's files as the door's file port: Read sees an unsaved buffer, Edit and Write go
through the editor (which shows them and can undo them). Whatever the client does not offer
stays on the disk."""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

from acp import Client, RequestError

log = logging.getLogger("peri.acp")

# A file the editor leaves to the disk is read whole; past this it is refused, not loaded.
MAX_DISK_BYTES = 64 << 20
# Never wait for a FIFO's writer: every session of this process shares one loop.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class EditorFiles:
    def __init__(self, conn: Client, *, read: bool, write: bool) -> None:
        self.conn = conn
        self.read, self.write = read, write
        self.session_id = ""  # set once the session exists (the port is built before it)

    async def read_text(self, path: str) -> str:
        if self.read:
            try:
                answer = await self.conn.read_text_file(session_id=self.session_id, path=path)
                return answer.content
            except RequestError as e:  # not open and not on disk: the disk says which
                log.info("fs/read_text_file %s: %s", path, e)
        return _disk_text(Path(path))

    async def write_text(self, path: str, text: str) -> None:
        if self.write:
            await self.conn.write_text_file(session_id=self.session_id, path=path, content=text)
            return
        target = Path(path)
        # whole or not at all: a reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _disk_text(path: Path) -> str:
    """A regular file's text; a FIFO, socket, device (`/dev/zero`) or a huge file is refused
    unread (OSError), a missing one is FileNotFoundError, as the port promises."""
    fd = os.open(path, _OPEN_FLAGS)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)  # judged on what was opened, so a swap after a check is caught
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file (a directory, FIFO, socket or device)")
        data = f.read(MAX_DISK_BYTES + 1)
    if len(data) > MAX_DISK_BYTES:
        raise OSError(f"{path} is larger than {MAX_DISK_BYTES >> 20} MiB; not read")
    return data.decode("utf-8")
