"""`peri acp` never wedges on a FIFO (issue 37 item 5): not one planted at `.git/HEAD`, not one the
model reads when the editor leaves the file to the disk. Every session of an ACP process shares
its loop, so one blocked read would stop them all."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ReadTextFileResponse

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri


class BuffersOnly(Editor):
    """An editor that reads only its open buffers and leaves every other file to the disk."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        raise RequestError.resource_not_found(path)


def _release(fifo: Path) -> None:
    """Open the FIFO's writing end and close it: a reader waiting on it gets its end of file."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.timeout(120)
async def test_a_fifo_at_git_head_does_not_wedge_acp(peri: Peri, editor: Editor) -> None:
    subprocess.run(["git", "init", "-q", str(peri.workspace)], check=True)
    head = peri.workspace / ".git" / "HEAD"
    head.unlink()
    os.mkfifo(head)
    peri.server.set_script([{"text": "answered"}, {"text": "answered again"}])
    try:
        async with running(peri, editor) as conn:
            session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
            for _ in range(2):
                answer = await asyncio.wait_for(
                    conn.prompt(session_id=session.session_id, prompt=[text_block("hi")]), 60
                )
                assert answer.stop_reason == "end_turn"
    finally:
        _release(head)
    assert editor.text() == "answeredanswered again"


@pytest.mark.timeout(120)
async def test_a_fifo_read_from_the_disk_fails_the_read_not_acp(peri: Peri) -> None:
    editor = BuffersOnly()
    fifo = peri.workspace / "pipe.txt"
    os.mkfifo(fifo)
    (peri.workspace / "zero.txt").symlink_to("/dev/zero")
    peri.server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Read", "input": {"file_path": "pipe.txt"}},
                    {"name": "Read", "input": {"file_path": "zero.txt"}},
                ]
            },
            {"text": "neither could be read"},
        ]
    )
    try:
        async with running(peri, editor, fs=True) as conn:
            session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
            answer = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("read")]), 60
            )
    finally:
        _release(fifo)
    assert answer.stop_reason == "end_turn"
    done = [u for u in editor.of("tool_call_update") if u.status in ("completed", "failed")]
    shown = [u.content[0].content.text for u in done]
    assert len(shown) == 2 and all("not a regular file" in text for text in shown), shown
    assert editor.text() == "neither could be read"
