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
from peri_cli.sdk import (
    Allow,
    Deny,
    PeriClient,
    PermissionContext,
    ResultEvent,
    SystemEvent,
    query,
)
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


async def test_always_keeps_the_domain_in_the_layer_named(
    server: FakeServer, tmp_path: Path, page_port: int
) -> None:
    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        return Allow(remember="project", keep_in="user")

    sent = await _run(server, tmp_path, page_port, ask)
    assert PAGE.decode().strip() in sent, sent
    user = tmp_path / "home" / ".peri" / "settings.json"
    assert json.loads(user.read_text())["sandbox"]["network"]["allowedDomains"] == ["localhost"]
    assert not (tmp_path / "ws" / ".peri" / "settings.local.json").exists()


async def test_an_always_that_cannot_be_saved_is_a_warning(
    server: FakeServer, tmp_path: Path, page_port: int
) -> None:
    """The note reaches the program as a warning notice (and `peri -p`'s stderr through it)."""
    home = tmp_path / "home" / ".peri"
    home.mkdir(parents=True)
    (tmp_path / "real.json").write_text("{}")
    (home / "settings.json").symlink_to(tmp_path / "real.json")  # the edit refuses a link

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        return Allow(remember="project", keep_in="user")

    command = f"curl -s --max-time 20 http://localhost:{page_port}/"
    server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "ok"}]
    )
    options = options_for(server, tmp_path, sandbox={"enabled": True}, can_use_tool=ask)
    events = [e async for e in query("go", options)]
    notices = [e for e in events if isinstance(e, SystemEvent) and e.subtype == "notice"]
    texts = [(e.data.get("level"), e.data.get("text", "")) for e in notices]
    assert any(
        level == "warning" and "could not save localhost to the allowed domains" in text
        for level, text in texts
    ), texts
    assert (tmp_path / "real.json").read_text() == "{}"
    assert PAGE.decode().strip() in json.dumps(model_calls(server)[-1]["messages"][-1])


async def test_always_in_an_untrusted_workspace_says_it_is_not_read_back(
    server: FakeServer, tmp_path: Path, page_port: int
) -> None:
    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        return Allow(remember="project")

    command = f"curl -s --max-time 20 http://localhost:{page_port}/"
    server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "ok"}]
    )
    options = options_for(server, tmp_path, sandbox={"enabled": True}, can_use_tool=ask)
    async with PeriClient(options) as client:
        trusted = client.runtime is not None and client.runtime.trusted
        await client.send("go")
        events = [e async for e in client.events()]
    texts = [e.data.get("text", "") for e in events if isinstance(e, SystemEvent)]
    said = any("this workspace is not trusted" in t for t in texts)
    assert not trusted  # (a program's workspace is trusted only when it says so)
    assert said, texts
