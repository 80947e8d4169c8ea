"""The editor's files as the door's file port: Read sees an unsaved buffer, Edit and Write go
through the editor (which shows them and can undo them). Whatever the client does not offer
stays on the disk."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from acp import Client, RequestError

log = logging.getLogger("peri.acp")


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
        return Path(path).read_text(encoding="utf-8")

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
