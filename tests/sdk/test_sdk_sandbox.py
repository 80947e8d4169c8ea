"""`PeriOptions.sandbox` takes the settings object: a program's Bash calls run sandboxed, and
leaving the sandbox goes to `can_use_tool` with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from peri_cli.sandbox.probe import probe
from peri_cli.sdk import (
    Allow,
    Deny,
    PeriClient,
    PeriError,
    PermissionContext,
    ResultEvent,
    SystemEvent,
    query,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for

pytestmark = pytest.mark.skipif(not probe().available, reason=probe().why_not)


async def test_options_sandbox_holds_and_asks_to_leave(server: FakeServer, tmp_path: Path) -> None:
    asked: list[PermissionContext] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        asked.append(ctx)
        return Deny("stay inside")

    server.set_script(
        [
            {
                "tool_calls": [
                    {"name": "Bash", "input": {"command": "touch ~/planted"}},
                    {
                        "name": "Bash",
                        "input": {"command": "touch ~/out", "dangerouslyDisableSandbox": True},
                    },
                ]
            },
            {"text": "ok"},
        ]
    )
    options = options_for(server, tmp_path, sandbox={"enabled": True}, can_use_tool=ask)
    events = [e async for e in query("go", options)]
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "ok"
    home = tmp_path / "home"
    assert not (home / "planted").exists() and not (home / "out").exists()
    assert len(asked) == 1 and "OUTSIDE the sandbox" in asked[0].reason
    sent = str(model_calls(server)[-1])
    assert "denied by the sandbox" in sent


async def test_a_bad_sandbox_object_is_a_clear_error(server: FakeServer, tmp_path: Path) -> None:
    options = options_for(server, tmp_path, sandbox={"enabled": "yes"})
    with pytest.raises(PeriError, match=r"sandbox\.enabled: expected true or false"):
        [e async for e in query("go", options)]


async def test_settings_edited_mid_session_apply_to_the_next_command(
    server: FakeServer, tmp_path: Path
) -> None:
    """The local settings file, edited (here: made) between two prompts, changes what the next
    sandboxed command may read, without a new session."""
    cat = {"tool_calls": [{"name": "Bash", "input": {"command": "cat secret.txt"}}]}
    server.set_script([cat, {"text": "first"}, cat, {"text": "second"}])
    options = options_for(server, tmp_path, sandbox={"enabled": True}, setting_sources=["local"])
    ws = tmp_path / "ws"
    (ws / "secret.txt").write_text("TOP-SECRET\n")
    async with PeriClient(options) as client:
        await client.send("one")
        [e async for e in client.events()]
        assert "TOP-SECRET" in json.dumps(model_calls(server)[-1]["messages"][-1])
        (ws / ".peri").mkdir(exist_ok=True)
        local = {"sandbox": {"filesystem": {"denyRead": ["secret.txt"]}}}
        (ws / ".peri" / "settings.local.json").write_text(json.dumps(local))
        await client.send("two")
        events = [e async for e in client.events()]
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "second"
    sent = json.dumps(model_calls(server)[-1]["messages"][-1])
    assert "TOP-SECRET" not in sent and "read denied by the sandbox" in sent, sent


async def test_a_broken_settings_edit_keeps_the_last_policy_and_warns(
    server: FakeServer, tmp_path: Path
) -> None:
    echo = {"tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]}
    server.set_script([echo, {"text": "first"}, echo, {"text": "second"}])
    options = options_for(server, tmp_path, sandbox={"enabled": True}, setting_sources=["local"])
    ws = tmp_path / "ws"
    async with PeriClient(options) as client:
        await client.send("one")
        [e async for e in client.events()]
        (ws / ".peri").mkdir(exist_ok=True)
        bad = {"sandbox": {"filesystem": {"denyRead": "not a list"}}}
        (ws / ".peri" / "settings.local.json").write_text(json.dumps(bad))
        await client.send("two")
        events = [e async for e in client.events()]
    texts = [e.data.get("text", "") for e in events if isinstance(e, SystemEvent)]
    assert any("sandbox settings not applied" in t for t in texts), texts
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "second"
