"""The Meta Harness end to end: the real `peri` process, the real SDKs, the fake model server.
A replaced section reaches the frozen prompt; a removed capability reaches no request (the tools
list, SearchExtraTools, ExecuteExtraTool, a SubAgent's request, the contributions); resume and
fork keep the frozen state after the settings change; `peri meta --json` has the contract's shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peri_cli.context.snapshot import base_section
from peri_cli.session.transcript_file import load
from peri_cli.tools import capability_tools
from tests.e2e.conftest import Peri, system_text
from tests.e2e.test_mcp_e2e import TIME, execute, script, tool_names, tool_results
from tests.mcp.helpers import pids


def settings(peri: Peri, *, user: dict[str, Any] | None = None, **project: Any) -> None:
    """`project` keys go to .peri/settings.json, `user` to $PERI_HOME/settings.json."""
    if user is not None:
        home = peri.home / ".peri"
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps(user))
    (peri.workspace / ".peri").mkdir(exist_ok=True)
    (peri.workspace / ".peri" / "settings.json").write_text(json.dumps(project))


def override(peri: Peri, section: str, text: str) -> Path:
    path = peri.workspace / ".peri" / "meta" / f"{section}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill(peri: Peri) -> None:
    """A personal skill the model may load (the bundled ones are for the user only)."""
    folder = peri.home / ".peri" / "skills" / "demo-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: demo-skill\ndescription: Demonstrates things\n---\nSKILL-BODY-MARKER\n"
    )


def header_meta(peri: Peri, session_id: str) -> dict[str, bool]:
    return load(peri.transcript(session_id)).header.snapshot.meta_harness


def test_a_replaced_section_is_in_the_frozen_prompt(peri: Peri, provider: str) -> None:
    peri.provider = provider
    settings(peri, meta_harness={"identity": True})
    override(peri, "identity", "You are Zed, the workspace's own agent.\n")
    peri.server.set_script([{"text": "hi"}])
    result = peri.json("-p", "hello")
    assert result["result"] == "hi", result
    system = system_text(peri.model_calls()[0])
    assert system.startswith("You are Zed, the workspace's own agent.\n\n")
    assert base_section("identity") not in system
    assert base_section("working") in system and base_section("safety") in system
    assert header_meta(peri, result["session_id"]) == {"identity": True}


def test_a_bad_override_keeps_the_built_in_and_says_why(peri: Peri) -> None:
    settings(peri, meta_harness={"identity": True, "teleport": False})
    override(peri, "identity", "# Environment\n- Workspace: /somewhere/else\n")
    peri.server.set_script([{"text": "hi"}])
    done = peri.run("-p", "hello")
    assert done.returncode == 0, done.stderr
    assert "would forge Peri's own '# Environment' heading" in done.stderr
    assert "meta_harness.teleport: unknown name" in done.stderr
    system = system_text(peri.model_calls()[0])
    assert system.startswith(base_section("identity")) and "/somewhere/else" not in system


def test_a_non_boolean_value_is_a_one_line_startup_error(peri: Peri) -> None:
    settings(peri, meta_harness={"shell": "off"})
    for args in (("-p", "hello"), ("meta",), ("meta", "--json")):
        done = peri.run(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert 'meta_harness.shell: expected true or false, got "off"' in line
        assert "Traceback" not in done.stderr
    assert peri.model_calls() == []


def test_removed_capabilities_reach_no_request(peri: Peri) -> None:
    """shell, skills and git off, MCP on: Bash and Skill are in no tools list, SearchExtraTools
    finds MCP tools but never them, ExecuteExtraTool cannot run them, a SubAgent has none of
    them, and neither the skill listing nor the git branch is in any request."""
    settings(
        peri,
        user={"mcpServers": {"time": TIME}},
        meta_harness={"shell": False, "skills": False, "git": False},
    )
    skill(peri)
    (peri.workspace / ".git").mkdir()
    (peri.workspace / ".git" / "HEAD").write_text("ref: refs/heads/featurebranch-xyz\n")
    peri.server.set_script(
        [
            {
                "when": "main",
                "tool_calls": [
                    {
                        "name": "SearchExtraTools",
                        "input": {"query": "Bash shell command Skill time"},
                    }
                ],
            },
            {"when": "main", **execute("Bash", {"command": "echo pwned"})},
            {"when": "main", **execute("Skill", {"name": "demo-skill"})},
            {"when": "main", "tool_calls": [{"name": "Bash", "input": {"command": "echo x"}}]},
            {
                "when": "main",
                "tool_calls": [
                    {"name": "Agent", "input": {"prompt": "child: look around", "description": "c"}}
                ],
            },
            {"when": "child:", "text": "child report"},
            {"when": "main", "text": "done"},
        ]
    )
    result = peri.json("-p", "main task", "--permission-mode", "bypass")
    assert result["result"] == "done", result
    calls = peri.model_calls()
    assert len(calls) == 7
    for body in calls:
        names = tool_names(body)
        assert "Bash" not in names and "Skill" not in names
        assert {"Read", "SearchExtraTools", "ExecuteExtraTool"} <= set(names)
        text = json.dumps(body)
        assert "featurebranch-xyz" not in text  # the git contribution is gone
        assert "SKILL-BODY-MARKER" not in text  # (the model's own call names the skill)
        assert "demo-skill" not in system_text(body) + json.dumps(body["tools"])
        assert "# Skills" not in system_text(body)
        assert "Shell:" not in system_text(body)  # the shell note of the frozen prompt
    child = next(b for b in calls if "child: look around" in json.dumps(b["messages"][-1]))
    assert "Agent" in tool_names(child) and "Bash" not in tool_names(child)
    found = tool_results(calls[1])[-1]
    assert "mcp__time__" in found and '"name": "Bash"' not in found and '"Skill"' not in found
    assert "No tool named 'Bash'" in tool_results(calls[2])[-1]
    assert "No tool named 'Skill'" in tool_results(calls[3])[-1]
    assert "Unknown tool 'Bash'" in tool_results(calls[4])[-1]
    assert header_meta(peri, result["session_id"]) == {
        "shell": False,
        "skills": False,
        "git": False,
    }
    # `/demo-skill` typed by the user is plain text too: the skill is not there to expand.
    peri.server.set_script([{"text": "plain"}])
    assert peri.json("-p", "/demo-skill now")["result"] == "plain"
    last = json.dumps(peri.model_calls()[-1])
    assert "/demo-skill now" in last and "SKILL-BODY-MARKER" not in last


def test_mcp_off_starts_no_server_and_offers_no_extra_tools(peri: Peri, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids.txt"
    peri.extra_env["PERI_TEST_PIDFILE"] = str(pidfile)
    hang = script("hang_server.py", "call")
    settings(peri, user={"mcpServers": {"time": TIME, "hang": hang}}, meta_harness={"mcp": False})
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "SearchExtraTools", "input": {"query": "time"}}]},
            {"tool_calls": [{"name": "Agent", "input": {"prompt": "kid: go", "description": "k"}}]},
            {"when": "kid:", **execute("mcp__time__get_current_time", {"timezone": "UTC"})},
            {"when": "kid:", "text": "kid done"},
            {"text": "done"},
        ]
    )
    result = peri.json("-p", "what time is it", "--permission-mode", "bypass")
    assert result["result"] == "done", result
    calls = peri.model_calls()
    for body in calls:
        names = tool_names(body)
        assert not [n for n in names if n.startswith("mcp__")]
    # the wrappers are there for the built-in deferred tools (WebFetch), but find no MCP tool
    assert "mcp__" not in tool_results(calls[1])[-1]
    results = [r for body in calls for r in tool_results(body)]
    assert any("No tool named 'mcp__time__get_current_time'" in r for r in results)  # the kid
    assert pids(pidfile) == []  # no server was started


def test_resume_and_fork_keep_the_frozen_state_after_settings_change(peri: Peri) -> None:
    settings(peri, meta_harness={"identity": True, "shell": False})
    override(peri, "identity", "You are Zed, frozen at creation.")
    peri.server.set_script([{"text": "first"}])
    first = peri.json("-p", "first task")
    sid = first["session_id"]
    # Everything changes on disk: the settings turn all back on, the override file is rewritten.
    settings(peri, meta_harness={"shell": True, "BuiltInSubagents": False})
    override(peri, "identity", "You are Ann, written later.")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]},
            {"text": "second"},
            {"text": "forked"},
        ]
    )
    second = peri.json("-r", sid, "-p", "second task", "--permission-mode", "bypass")
    assert second["result"] == "second" and second["session_id"] == sid
    forked = peri.json("-r", sid, "--fork-session", "-p", "third task")
    assert forked["result"] == "forked" and forked["session_id"] != sid
    calls = peri.model_calls()
    assert len(calls) == 4
    for body in calls:
        assert system_text(body).startswith("You are Zed, frozen at creation.")
        assert "Ann" not in system_text(body)
        assert "Bash" not in tool_names(body)
        assert "Agent" in tool_names(body)  # BuiltInSubagents: false came later
    assert "Unknown tool 'Bash'" in tool_results(calls[2])[-1]
    assert header_meta(peri, forked["session_id"]) == {"identity": True, "shell": False}


def test_a_session_made_with_all_on_keeps_it_when_settings_turn_things_off(peri: Peri) -> None:
    skill(peri)
    peri.server.set_script([{"text": "one"}, {"text": "two"}])
    sid = peri.json("-p", "first")["session_id"]
    settings(peri, meta_harness={"shell": False, "skills": False})
    assert peri.json("-c", "-p", "again")["session_id"] == sid
    first, second = peri.model_calls()
    assert system_text(first) == system_text(second)
    assert "Bash" in tool_names(second) and "Skill" in tool_names(second)
    assert header_meta(peri, sid) == {}


def test_builtin_subagents_off_hides_the_built_in_types(peri: Peri) -> None:
    settings(peri, meta_harness={"BuiltInSubagents": False})
    peri.server.set_script([{"text": "a"}])
    peri.json("-p", "no types")
    (body,) = peri.model_calls()
    assert "Agent" not in tool_names(body)  # nothing to start: no Agent tool, no note
    assert "SubAgents:" not in system_text(body)
    agents = peri.workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\ndescription: Reviews diffs\n---\nReview.\n")
    peri.server.set_script([{"text": "b"}])
    peri.json("-p", "custom types")
    body = peri.model_calls()[-1]
    agent = next(t for t in body["tools"] if t["name"] == "Agent")
    assert "`reviewer`" in agent["description"]
    assert "- `general`" not in agent["description"]
    assert "- `explore`" not in agent["description"]


def test_peri_meta_json_has_the_contract_shape(peri: Peri) -> None:
    user_file = peri.home / ".peri" / "settings.json"
    settings(
        peri,
        user={"meta_harness": {"git": False}, "mcpServers": {"time": TIME}},
        meta_harness={"identity": True, "shell": False, "BuiltInSubagents": False, "Skils": True},
    )
    project_file = peri.workspace / ".peri" / "settings.json"
    path = override(peri, "identity", "You are Zed.")
    done = peri.run("meta", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) >= {"sections", "capabilities"}
    assert [s["id"] for s in data["sections"]] == ["identity", "working", "safety"]
    for section in data["sections"]:
        assert set(section) >= {"id", "overridden", "source"}
    assert data["sections"][0] == {
        "id": "identity",
        "overridden": True,
        "source": str(path),
        "setting": str(project_file),
    }
    assert data["sections"][1]["overridden"] is False
    assert data["sections"][1]["source"] == "built-in"
    caps = {c["name"]: c for c in data["capabilities"]}
    for cap in caps.values():
        assert set(cap) >= {"name", "enabled", "source", "tools"}
        assert isinstance(cap["tools"], list)
    assert caps["shell"] == {
        "name": "shell",
        "enabled": False,
        "source": str(project_file),
        "tools": ["Bash"],
    }
    assert caps["git"]["enabled"] is False and caps["git"]["source"] == str(user_file)
    assert caps["files"] == {
        "name": "files",
        "enabled": True,
        "source": "built-in",
        "tools": capability_tools()["files"],  # what the tools' own traits say
    }
    assert caps["files"]["tools"][:3] == ["Read", "Write", "Edit"]
    assert caps["mcp"]["tools"] == ["mcp__time__*"]
    assert data["builtin_subagents"] == {"enabled": False, "source": str(project_file)}
    (warning,) = data["warnings"]
    assert "meta_harness.Skils: unknown name (did you mean 'skills'?)" in warning
    text = peri.run("meta")
    assert text.returncode == 0
    assert "shell      off" in text.stdout and "overridden by" in text.stdout
    assert "unknown name" in text.stderr
