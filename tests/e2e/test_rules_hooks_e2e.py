"""Issue 14 end to end: permission rules and command hooks through the real `peri -p`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import Peri


def user_settings(peri: Peri, data: dict[str, object]) -> None:
    folder = peri.home / ".peri"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(data))


def bash(command: str) -> dict[str, object]:
    return {"name": "Bash", "input": {"command": command}}


def last_request(peri: Peri) -> str:
    return json.dumps(peri.model_calls()[-1])


def test_an_allow_rule_runs_echo_in_default_mode_while_rm_is_denied(peri: Peri) -> None:
    (peri.workspace / "keep.txt").write_text("keep me\n")
    peri.server.set_script(
        [
            {"tool_calls": [bash("echo allowed-by-rule"), bash("rm keep.txt")]},
            {"text": "done"},
        ]
    )
    result = peri.json("-p", "go", "--allowedTools", "Bash(echo:*)")
    assert not result["is_error"]
    sent = last_request(peri)
    assert "allowed-by-rule" in sent  # echo ran
    assert (peri.workspace / "keep.txt").exists()  # rm did not
    assert [d["tool_input"]["command"] for d in result["permission_denials"]] == ["rm keep.txt"]


def test_a_compound_command_is_judged_part_by_part(peri: Peri) -> None:
    (peri.workspace / "keep.txt").write_text("keep me\n")
    user_settings(peri, {"permissions": {"allow": ["Bash(echo:*)"]}})
    peri.server.set_script([{"tool_calls": [bash("echo hi && rm keep.txt")]}, {"text": "ok"}])
    result = peri.json("-p", "go")
    assert (peri.workspace / "keep.txt").exists()
    assert result["permission_denials"][0]["tool_input"]["command"] == "echo hi && rm keep.txt"


def test_disallowed_tools_deny_even_in_bypass(peri: Peri) -> None:
    peri.server.set_script([{"tool_calls": [bash("echo should-not-run")]}, {"text": "ok"}])
    result = peri.json(
        "-p", "go", "--permission-mode", "bypass", "--disallowedTools", "Bash(echo:*)"
    )
    assert "should-not-run\\n" not in last_request(peri)
    assert result["permission_denials"][0]["tool_name"] == "Bash"


def test_a_bad_rule_on_the_command_line_is_a_usage_error(peri: Peri) -> None:
    done = peri.run("-p", "go", "--allowedTools", "Bash(unclosed")
    assert done.returncode == 2 and "--allowedTools" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_read_deny_holds_for_read_grep_the_wrapper_and_subagents(peri: Peri) -> None:
    secrets = peri.workspace / "secrets"
    secrets.mkdir()
    (secrets / "key.txt").write_text("TOPSECRET-42\n")
    (peri.workspace / "notes.txt").write_text("public TOPSECRET-not really\n")
    user_settings(
        peri,
        {
            "permissions": {"deny": ["Read(./secrets/**)"]},
            # a stdio MCP server, so the deferred-tool wrappers are offered
            "mcpServers": {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}},
        },
    )
    read = {"name": "Read", "input": {"file_path": "secrets/key.txt"}}
    wrapped = {
        "name": "ExecuteExtraTool",
        "input": {"tool_name": "Read", "params": {"file_path": "secrets/key.txt"}},
    }
    grep = {"name": "Grep", "input": {"pattern": "TOPSECRET", "output_mode": "content"}}
    agent = {"name": "Agent", "input": {"prompt": "read the key", "description": "reader"}}
    peri.server.set_script(
        [
            {"when": "find the key", "tool_calls": [read, wrapped, grep, agent]},
            {"when": "read the key", "tool_calls": [read]},
            {"when": "read the key", "text": "I could not read it."},
            {"when": "find the key", "text": "denied everywhere"},
        ]
    )
    result = peri.json("-p", "find the key", "--permission-mode", "bypass")
    assert not result["is_error"], result
    for body in peri.model_calls():
        assert "TOPSECRET-42" not in json.dumps(body)
    assert "public TOPSECRET-not really" in last_request(peri)  # Grep still finds the rest
    assert "Read deny rule" in last_request(peri)
    denied = [d["tool_name"] for d in result["permission_denials"]]
    assert denied.count("Read") >= 2  # direct and through the wrapper (the child's are its own)


def _hook_settings(peri: Peri, folder: Path, events: dict[str, str]) -> dict[str, object]:
    hooks: dict[str, object] = {}
    for event, body in events.items():
        script = folder / f"{event}.sh"
        script.write_text("#!/bin/sh\n" + body)
        script.chmod(0o755)
        hooks[event] = [{"matcher": "*", "hooks": [{"type": "command", "command": str(script)}]}]
    return {"hooks": hooks}


def test_a_pre_tool_use_hook_that_exits_2_blocks_and_the_model_reads_why(peri: Peri) -> None:
    user_settings(
        peri,
        _hook_settings(
            peri, peri.home, {"PreToolUse": "echo 'no shell today, use Read' >&2\nexit 2\n"}
        ),
    )
    peri.server.set_script([{"tool_calls": [bash("touch made.txt")]}, {"text": "ok"}])
    result = peri.json("-p", "go", "--permission-mode", "bypass")
    assert not result["is_error"]
    assert not (peri.workspace / "made.txt").exists()
    assert "no shell today, use Read" in last_request(peri)


def test_a_user_prompt_submit_hooks_output_reaches_the_request(peri: Peri) -> None:
    user_settings(
        peri,
        _hook_settings(peri, peri.home, {"UserPromptSubmit": "echo 'ticket ABC-123 is open'\n"}),
    )
    peri.server.set_script([{"text": "ok"}])
    assert not peri.json("-p", "what is open?")["is_error"]
    assert "ticket ABC-123 is open" in last_request(peri)


def test_a_project_hook_runs_only_in_a_trusted_workspace(peri: Peri) -> None:
    project = peri.workspace / ".peri"
    project.mkdir()
    settings = _hook_settings(peri, peri.workspace, {"UserPromptSubmit": 'touch "$PWD/hook-ran"\n'})
    (project / "settings.json").write_text(json.dumps(settings))
    peri.server.set_script([{"text": "one"}, {"text": "two"}])
    done = peri.run("-p", "untrusted")
    assert done.returncode == 0 and "hook" in done.stderr.lower()
    assert not (peri.workspace / "hook-ran").exists()
    assert peri.run("-p", "trusted", "--trust-workspace").returncode == 0
    assert (peri.workspace / "hook-ran").exists()
