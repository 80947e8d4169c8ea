"""MCP servers a program passes in `PeriOptions(mcp_servers=...)`: the first prompt waits for
those still starting (saying so), so a server that takes 2 s to start is usable at once; and
`get_mcp_status()` says how each server is (issue 40, item 4)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from peri_cli.sdk import PeriClient, ResultEvent, SystemEvent
from tests.fakeserver import FakeServer
from tests.mcp.helpers import SERVERS
from tests.sdk.conftest import model_calls, options_for

SLOW = {"command": sys.executable, "args": [str(SERVERS / "slow_server.py"), "2"]}
CALL = {"tool_calls": [{"name": "mcp__slow__echo", "input": {"text": "hello"}}]}


def _results(body: dict) -> list[str]:
    return [
        str(b.get("content"))
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


async def test_the_first_prompt_waits_for_a_slow_server_the_program_passed(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([CALL, {"text": "it echoed"}])
    options = options_for(server, tmp_path, mcp_servers={"slow": SLOW}, permission_mode="bypass")
    async with PeriClient(options) as client:
        before = await client.get_mcp_status()
        await client.send("echo hello through the slow server")
        events = [e async for e in client.events()]
        after = await client.get_mcp_status()
    result = events[-1]
    assert isinstance(result, ResultEvent) and not result.is_error, result
    results = _results(model_calls(server)[-1])
    assert results and "slow server says hello" in results[-1], results
    (slow,) = before["mcpServers"]
    assert (slow["name"], slow["status"]) == ("slow", "pending")
    (slow,) = after["mcpServers"]
    assert slow["status"] == "connected" and slow["scope"] == "user"
    assert [t["name"] for t in slow["tools"]] == ["echo"]
    assert "error" not in slow
    notices = [
        e.data["text"] for e in events if isinstance(e, SystemEvent) and e.subtype == "notice"
    ]
    assert any("'slow'" in n and "starting" in n for n in notices), notices


async def test_a_server_that_fails_is_reported_with_its_error(
    server: FakeServer, tmp_path: Path
) -> None:
    broken = {"command": str(tmp_path / "no-such-program")}
    server.set_script([{"text": "fine"}])
    options = options_for(server, tmp_path, mcp_servers={"broken": broken})
    async with PeriClient(options) as client:
        await client.send("hi")
        [e async for e in client.events()]
        status = await client.get_mcp_status()
    (entry,) = status["mcpServers"]
    assert entry["status"] == "failed" and entry["error"]
    assert entry["tools"] == []


async def test_servers_from_the_settings_files_are_not_waited_for(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "fine"}])
    options = options_for(server, tmp_path, setting_sources=["user"])
    settings = tmp_path / "home" / ".peri" / "settings.json"
    settings.parent.mkdir(parents=True)
    slow = {**SLOW, "args": [str(SERVERS / "slow_server.py"), "3"]}
    settings.write_text(json.dumps({"mcpServers": {"slow": slow}}))
    async with PeriClient(options) as client:
        await client.send("hi")
        events = [e async for e in client.events()]
        status = await client.get_mcp_status()
    notices = [e for e in events if isinstance(e, SystemEvent) and e.subtype == "notice"]
    assert not notices  # the prompt ran while the server was still starting
    assert [s["status"] for s in status["mcpServers"]] == ["pending"]
