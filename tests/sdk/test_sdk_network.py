"""A program's sandboxed command reaching a new domain: the sandbox's proxy asks
`can_use_tool("Network", {"domain": ...})`; Allow lets it through, Allow(remember="project")
keeps the domain in the workspace's local settings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from peri_cli.sandbox.probe import probe
from peri_cli.sdk import Allow, Deny, PermissionContext, ResultEvent, query
from tests.fakeserver import FakeServer
from tests.sandbox.pages import PAGE
from tests.sdk.conftest import model_calls, options_for

pytestmark = [
    pytest.mark.skipif(not probe().available, reason=probe().why_not),
    pytest.mark.skipif(shutil.which("socat") is None, reason="socat is not installed"),
]


async def _run(server: FakeServer, root: Path, port: int, ask: Any) -> str:
    command = f"curl -s --max-time 20 http://localhost:{port}/"
    server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "ok"}]
    )
    options = options_for(server, root, sandbox={"enabled": True}, can_use_tool=ask)
    events = [e async for e in query("go", options)]
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "ok"
    return json.dumps(model_calls(server)[-1]["messages"][-1])


async def test_a_new_domain_asks_can_use_tool_and_allow_lets_it_through(
    server: FakeServer, tmp_path: Path, page_port: int
) -> None:
    asked: list[tuple[str, dict[str, Any], PermissionContext]] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        asked.append((name, tool_input, ctx))
        return Allow(remember="project") if name == "Network" else Deny("no")

    sent = await _run(server, tmp_path, page_port, ask)
    assert [(n, i) for n, i, _ in asked] == [("Network", {"domain": "localhost"})]
    assert "localhost" in asked[0][2].reason
    assert PAGE.decode().strip() in sent, sent
    local = tmp_path / "ws" / ".peri" / "settings.local.json"
    assert json.loads(local.read_text())["sandbox"]["network"]["allowedDomains"] == ["localhost"]


async def test_a_denied_domain_stays_out(
    server: FakeServer, tmp_path: Path, page_port: int
) -> None:
    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        return Deny("not that")

    sent = await _run(server, tmp_path, page_port, ask)
    assert PAGE.decode().strip() not in sent
    assert "localhost is not an allowed domain" in sent, sent
    assert not (tmp_path / "ws" / ".peri" / "settings.local.json").exists()
