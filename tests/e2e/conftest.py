"""End-to-end fixtures: the real `peri` process against the loopback fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakeserver import FakeServer

API_KEY = "sk-test-SECRET-0123456789"


@dataclass
class Peri:
    """`python -m peri_cli` in a workspace with its own PERI_HOME, pointed at the fake server."""

    server: FakeServer
    workspace: Path
    home: Path
    provider: str = "anthropic"
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_", "PERI_", "COMPACT", "DISABLE_"))
        }
        env = keep | {
            "PERI_HOME": str(self.home / ".peri"),
            "HOME": str(self.home),
            "PERI_PROVIDER": self.provider,
            "PYTHONUNBUFFERED": "1",
        }
        if self.provider == "anthropic":
            env |= {"ANTHROPIC_BASE_URL": self.server.url, "ANTHROPIC_API_KEY": API_KEY}
        else:
            env |= {"OPENAI_BASE_URL": self.server.openai_url, "OPENAI_API_KEY": API_KEY}
        return env | self.extra_env

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "peri_cli", *args],
            cwd=self.workspace,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "peri_cli", *args],
            check=False,
            cwd=self.workspace,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def json(self, *args: str) -> dict[str, Any]:
        done = self.run(*args, "--output-format", "json")
        assert done.stdout, done.stderr
        return json.loads(done.stdout)

    @property
    def sessions_dir(self) -> Path:
        (root,) = (self.home / ".peri" / "projects").iterdir()
        return root

    def transcript(self, session_id: str) -> Path:
        return self.sessions_dir / f"{session_id}.jsonl"

    def model_calls(self) -> list[dict[str, Any]]:
        """Bodies of the model requests the server accepted, in order."""
        return [r["body"] for r in self.server.requests if r["status"] == 200]


def system_text(body: dict[str, Any]) -> str:
    """The frozen system bytes as sent, for either wire format."""
    if "system" in body:
        return body["system"][0]["text"]
    return body["messages"][0]["content"]


def texts(body: dict[str, Any]) -> list[str]:
    """Every text a request carried in its messages (user and assistant), in order."""
    out: list[str] = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(b.get("text", "") for b in content if isinstance(b, dict) and "text" in b)
    return out


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture(params=["anthropic", "openai"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def peri(server: FakeServer, tmp_path: Path) -> Peri:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    return Peri(server=server, workspace=workspace, home=tmp_path / "home")
