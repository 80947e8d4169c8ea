"""The session's proxy: its socket listens (0600) before anything serves, a connection made
meanwhile waits and is served once the commands' loop starts it, and closing removes it."""

from __future__ import annotations

import asyncio
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from peri_cli.sandbox.netside import SOCKET_NAME, SessionNetwork


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="peri-net-") as d:  # short: Unix socket paths
        yield Path(d)


async def test_listens_at_once_serves_on_the_loop_and_closes(sock_dir: Path) -> None:
    path = sock_dir / SOCKET_NAME
    network = SessionNetwork(path, ["allowed.test"], [], ask=None, remember=None)
    assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o600
    reader, writer = await asyncio.open_unix_connection(str(path))  # waits in the backlog
    network.serve()
    writer.write(b"GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 5)
    assert b"403" in answer and b"denied.test is not an allowed domain" in answer
    writer.close()
    network.close()
    assert not path.exists()
    network.serve()  # after close: nothing starts again
    assert not path.exists()


def test_closing_without_a_loop_removes_the_socket(sock_dir: Path) -> None:
    path = sock_dir / SOCKET_NAME
    network = SessionNetwork(path, [], [], ask=None, remember=None)
    network.serve()  # no running loop: a no-op
    network.close()
    assert not path.exists()
