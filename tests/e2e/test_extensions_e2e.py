"""Issues 11 and 14 headless, the real `peri -p` against the fake model server: MCP prompts as
slash commands (waiting for a server that is still connecting), one stream-json `mcp` event per
server state change, SessionStart hooks at start and resume, PreCompact before `/compact`, a
project server added after trust is not started headless; and the TUI's "always allow in this
project" honoured by the next run."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from peri_cli.permissions.truststore import TrustRecord, TrustStore
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.tui.app import PeriApp
from tests.e2e.conftest import Peri, texts
from tests.e2e.test_mcp_e2e import tool_results
from tests.mcp.helpers import SERVERS, http_server, pids, server_processes
from tests.tui.harness import FIXED_NOW, make_runtime, send, until


@pytest.fixture
def web() -> Iterator[str]:
    with http_server() as url:
        yield url


def user_settings(peri: Peri, **settings: Any) -> None:
    home = peri.home / ".peri"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps(settings))


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def hook_script(peri: Peri, name: str, context: str) -> str:
    """A hook that appends its stdin (one JSON object) to `<name>.jsonl` and prints `context`."""
    log = peri.home / f"{name}.jsonl"
    path = peri.home / f"{name}.sh"
    path.write_text(f"#!/bin/sh\ncat >> {log}\necho >> {log}\necho '{context}'\n")
    path.chmod(0o755)
    return str(path)


def logged(peri: Peri, name: str) -> list[dict[str, Any]]:
    log = peri.home / f"{name}.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def hooks_for(event: str, command: str, matcher: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher:
        entry["matcher"] = matcher
    return {event: [entry]}


# --- MCP prompts and events -------------------------------------------------------------------


def test_an_mcp_prompt_is_a_headless_slash_command(peri: Peri, web: str) -> None:
    user_settings(peri, mcpServers={"web": {"type": "http", "url": web}})
    peri.server.set_script([{"text": "reviewed"}])
    done = peri.run("-p", "/mcp__web__review src/app.py style", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    (call,) = peri.model_calls()
    assert "Please review src/app.py, looking for style." in texts(call)
    assert "/mcp__web__review" not in json.dumps(call)
    mcp = [e for e in events(done.stdout) if e.get("subtype") == "mcp"]
    assert [(e["name"], e["status"]) for e in mcp] == [("web", "connecting"), ("web", "connected")]
    assert mcp[-1] | {"detail": ""} == {
        "type": "system",
        "subtype": "mcp",
        "name": "web",
        "scope": "user",
        "transport": "http",
        "status": "connected",
        "detail": "",
        "tools": 5,
        "prompts": 1,
    }
    assert events(done.stdout)[-1]["type"] == "result"


def test_a_bad_mcp_prompt_is_one_line_and_nothing_is_sent(peri: Peri, web: str) -> None:
    user_settings(peri, mcpServers={"web": {"type": "http", "url": web}})
    peri.server.set_script([{"text": "never"}])
    missing = peri.run("-p", "/mcp__web__review")
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1] == (
        "peri: error: /mcp__web__review needs path: /mcp__web__review <path> [focus]"
    )
    unknown = peri.json("-p", "/mcp__web__nope")
    assert unknown["is_error"] is True
    assert unknown["error"] == "MCP server 'web' has no prompt /mcp__web__nope; /mcp lists it"
    assert peri.model_calls() == []


def test_a_failed_server_is_an_event_and_its_prompt_says_why(peri: Peri, tmp_path: Path) -> None:
    broken = {"command": str(tmp_path / "no-such-server")}
    user_settings(peri, mcpServers={"junk": broken})
    peri.extra_env |= {"MCP_TIMEOUT": "4000", "PERI_TEST_PIDFILE": str(tmp_path / "pids")}
    peri.server.set_script([{"text": "never"}])
    done = peri.run("-p", "/mcp__junk__anything", "--output-format", "stream-json")
    assert done.returncode == 1
    mcp = [e for e in events(done.stdout) if e.get("subtype") == "mcp"]
    assert mcp[0]["status"] == "connecting" and mcp[-1]["status"] == "failed"
    result = events(done.stdout)[-1]
    assert result["is_error"]
    assert result["error"].startswith("MCP server 'junk' is not connected (failed): ")
    assert peri.model_calls() == []
    assert server_processes(tmp_path / "pids") == []


# --- SessionStart and PreCompact --------------------------------------------------------------


def test_session_start_hooks_run_at_start_and_resume(peri: Peri) -> None:
    start = hook_script(peri, "start", "START-CONTEXT-42")
    user_settings(peri, hooks=hooks_for("SessionStart", start))
    peri.server.set_script([{"text": "first"}, {"text": "second"}])
    first = peri.json("-p", "hello")
    assert first["is_error"] is False
    assert "START-CONTEXT-42" in "\n".join(texts(peri.model_calls()[0]))
    second = peri.json("-c", "-p", "again")
    assert second["session_id"] == first["session_id"]
    payloads = logged(peri, "start")
    assert [p["source"] for p in payloads] == ["startup", "resume"]
    assert {p["session_id"] for p in payloads} == {first["session_id"]}
    assert payloads[0]["hook_event_name"] == "SessionStart"
    assert "\n".join(texts(peri.model_calls()[1])).count("START-CONTEXT-42") == 2


def test_pre_compact_runs_before_compact_with_the_focus(peri: Peri) -> None:
    pre = hook_script(peri, "pre", "ignored")
    start = hook_script(peri, "after", "AFTER-COMPACT")
    user_settings(
        peri,
        hooks={
            **hooks_for("PreCompact", pre, "manual"),
            **hooks_for("SessionStart", start, "compact"),
        },
    )
    peri.server.set_script(
        [{"text": "An answer."}, {"text": "<summary>The user said hello.</summary>"}]
    )
    first = peri.json("-p", "hello")
    done = peri.json("-r", first["session_id"], "-p", "/compact keep the tests")
    assert done["is_error"] is False, done
    (payload,) = logged(peri, "pre")
    assert payload["hook_event_name"] == "PreCompact"
    assert payload["trigger"] == "manual"
    assert payload["custom_instructions"] == "keep the tests"
    assert [p["source"] for p in logged(peri, "after")] == ["compact"]


# --- project servers added after trust --------------------------------------------------------


def test_headless_does_not_start_a_project_server_the_user_never_approved(
    peri: Peri, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    peri.extra_env |= {"PERI_TEST_PIDFILE": str(pidfile)}
    crash = {"command": sys.executable, "args": [str(SERVERS / "crash_server.py")]}
    (peri.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"added": crash}}))
    TrustStore(peri.home / ".peri").record(peri.workspace, TrustRecord(True))
    ping = {"name": "ExecuteExtraTool", "input": {"tool_name": "mcp__added__ping", "params": {}}}
    # The second run calls the server's tool: it waits for the server, which is connected in the
    # background (an answer alone can come before the server has even started).
    peri.server.set_script([{"text": "ok"}, {"tool_calls": [ping]}, {"text": "pinged"}])
    done = peri.run("-p", "hi")
    assert done.returncode == 0
    assert (
        "MCP server 'added' from .mcp.json not started: it was added after you trusted this "
        "workspace; start `peri` once to approve it, or run with --trust-workspace"
    ) in done.stderr
    assert pids(pidfile) == []
    flagged = peri.run("-p", "hi", "--trust-workspace", "--allowedTools", "mcp__added__ping")
    assert flagged.returncode == 0 and "'added'" not in flagged.stderr, flagged.stderr
    assert flagged.stdout == "pinged\n"
    assert "ok" in tool_results(peri.server.requests[-1]["body"])
    assert len(pids(pidfile)) == 1 and server_processes(pidfile) == []


# --- issue 14: "always allow in this project", then a new run ---------------------------------


async def test_always_allow_in_this_project_is_honoured_by_the_next_run(
    peri: Peri, tmp_path: Path
) -> None:
    """The TUI writes `.peri/settings.local.json`; a new `peri -p` in the (trusted) workspace
    runs `git diff:*` commands without asking, and still denies `git difftool`."""
    replies = [
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "git diff HEAD"})]),
        ScriptedReply(text="ok"),
    ]
    runtime = make_runtime(tmp_path, replies)
    assert runtime.workspace == peri.workspace
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "diff", wait=False)
        await until(pilot, lambda: app.approvals.pending is not None, what="the approval")
        await until(pilot, lambda: app.focused is app.approvals.pending)
        await pilot.press("p")
        await until(pilot, lambda: not app.busy)
    runtime.close()
    local = json.loads((peri.workspace / ".peri" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(git diff:*)"]

    TrustStore(peri.home / ".peri").record(peri.workspace, TrustRecord(True))
    bash = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "git diff --stat"}}]},
        {"tool_calls": [{"name": "Bash", "input": {"command": "git difftool"}}]},
        {"text": "done"},
    ]
    peri.server.set_script(bash)
    result = peri.json("-p", "diff again")
    assert result["is_error"] is False
    denied = [d["tool_input"]["command"] for d in result["permission_denials"]]
    assert denied == ["git difftool"]
    untrusted = tmp_path / "untrusted-home"
    peri.server.set_script([bash[0], {"text": "done"}])
    peri.extra_env |= {"PERI_HOME": str(untrusted)}  # no trust record: the file's allow is ignored
    result = peri.json("-p", "diff again")
    assert [d["tool_input"]["command"] for d in result["permission_denials"]] == ["git diff --stat"]
