"""The SDK against the loopback fake server: real providers, real tools, one PERI_HOME per test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from peri_cli.sdk import PeriOptions
from tests.fakeserver import FakeServer

API_KEY = "sk-test-SECRET-0123456789"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


def options_for(server: FakeServer, root: Path, **more: Any) -> PeriOptions:
    """Options for a workspace `root/ws` with its own home and PERI_HOME."""
    (root / "ws").mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(parents=True, exist_ok=True)
    return PeriOptions(
        cwd=root / "ws",
        peri_home=root / "home" / ".peri",
        provider="anthropic",
        env={
            "HOME": str(root / "home"),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": API_KEY,
        },
        **more,
    )


def model_calls(server: FakeServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["status"] == 200]


def sent_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)
