"""What is hidden is hidden through every door (issue 37, item 7): `peri -p`, even in `bypass`,
never hands the model `~/.ssh` or a `denyRead` path through Read, Grep or Glob, with the sandbox
off; a program's `can_use_tool` may allow one read, and is asked for each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peri_cli.sdk import Allow, PermissionContext, ResultEvent, query
from tests.e2e.conftest import Peri
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for

KEY = "FAKE-PRIVATE-KEY-0xC0FFEE"


def plant(home: Path, ws: Path) -> None:
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text(f"{KEY}\n")
    (ws / "vault").mkdir(parents=True, exist_ok=True)
    (ws / "vault" / "token").write_text(f"{KEY}-vault\n")
    (ws / "app.py").write_text("print('hi')\n")


def test_headless_bypass_never_hands_over_a_hidden_path(peri: Peri) -> None:
    plant(peri.home, peri.workspace)
    settings = peri.workspace / ".peri" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"sandbox": {"filesystem": {"denyRead": ["./vault"]}}}))
    calls = [
        {"name": "Read", "input": {"file_path": str(peri.home / ".ssh" / "id_rsa")}},
        {"name": "Read", "input": {"file_path": "vault/token"}},
        {"name": "Grep", "input": {"pattern": "FAKE", "output_mode": "content"}},
        {"name": "Grep", "input": {"pattern": "FAKE", "path": str(peri.home)}},
        {"name": "Glob", "input": {"pattern": "**/*", "path": str(peri.home)}},
    ]
    peri.server.set_script([{"tool_calls": calls}, {"text": "done"}])
    result = peri.json("-p", "look", "--permission-mode", "bypass", "--trust-workspace")
    assert result["result"] == "done", result
    results = [
        block
        for message in peri.model_calls()[-1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == len(calls)
    shown = json.dumps(results)
    assert KEY not in shown, shown
    denials, searches = results[:2], results[2:]
    assert all("hidden path" in json.dumps(r) for r in denials)
    assert "id_rsa" not in json.dumps(searches) and ".peri" in json.dumps(searches)  # ran
    denied = [d["tool_name"] for d in result["permission_denials"]]
    assert denied == ["Read", "Read"], result["permission_denials"]
    assert "hidden path" in result["permission_denials"][0]["reason"]


async def test_a_program_may_allow_one_read_and_is_asked_each_time(
    server: FakeServer, tmp_path: Path
) -> None:
    options = options_for(server, tmp_path, permission_mode="bypass")
    plant(tmp_path / "home", tmp_path / "ws")
    asked: list[tuple[str, str]] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        asked.append((name, ctx.reason))
        return Allow()

    options.can_use_tool = ask
    read = {"name": "Read", "input": {"file_path": str(tmp_path / "home" / ".ssh" / "id_rsa")}}
    server.set_script([{"tool_calls": [read]}, {"tool_calls": [read]}, {"text": "ok"}])
    events = [e async for e in query("read my key", options)]
    assert isinstance(events[-1], ResultEvent) and not events[-1].is_error
    assert [n for n, _ in asked] == ["Read", "Read"] and "hidden path" in asked[0][1]
    assert KEY in json.dumps(model_calls(server)[-1]["messages"])  # what the program allowed
