"""Fixtures for the MCP tests (the servers and helpers are in helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.helpers import http_server


@pytest.fixture
def pidfile(tmp_path: Path) -> Path:
    """Test servers started with `env_for(pidfile)` note their pids in this file."""
    return tmp_path / "pids.txt"


@pytest.fixture(scope="session")
def http_url() -> Iterator[str]:
    """The in-repo streamable-HTTP server, for the whole run."""
    with http_server() as url:
        yield url


@pytest.fixture(scope="session")
def sse_url() -> Iterator[str]:
    with http_server(sse=True) as url:
        yield url
