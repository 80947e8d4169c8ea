"""The loopback fake server for the provider tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakeserver import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv
