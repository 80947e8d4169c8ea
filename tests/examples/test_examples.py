"""The programs in examples/ (ported from the Claude Agent SDK's examples) run as a user runs them,
each in its own process against the fake server; what they print is what the script's model
said and what Peri did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakeserver import FakeServer
from tests.sdk.programs import run_program

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(name: str, tmp_path: Path, server: FakeServer, *args: str) -> str:
    return run_program([str(EXAMPLES / name), *args], tmp_path, server)


def call(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "input": tool_input}]}


def sent(server: FakeServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["status"] == 200 and r["method"] == "POST"]


def test_every_example_has_a_test() -> None:
    tested = {
        line.split('"')[1]
        for line in Path(__file__).read_text().splitlines()
        if line.lstrip().startswith("out = run(")
    }
    assert tested == {p.name for p in EXAMPLES.glob("*.py")}


def test_quick_start(server: FakeServer, tmp_path: Path) -> None:
    server.set_script(
        [
            {"text": "4"},
            {"text": "A programming language."},
            call("Write", file_path="hello.txt", content="Hello, World!"),
            {"text": "Created hello.txt."},
        ]
    )
    out = run("quick_start.py", tmp_path, server)
    assert out.count("Cost: $") == 3
    lines = [line for line in out.splitlines() if not line.startswith("Cost")]
    assert lines == [
        "=== Basic ===",
        "Peri: 4",
        "=== With options ===",
        "Peri: A programming language.",
        "=== With tools ===",
        "Peri: Created hello.txt.",
    ]
    assert (tmp_path / "hello.txt").read_text() == "Hello, World!"  # allowed, so it ran unasked
    assert "Explain things simply." in json.dumps(sent(server)[1]["system"])


def test_streaming_mode(server: FakeServer, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# The readme\n")
    server.set_script(
        [
            {"text": "4"},
            {"text": "Paris."},
            {"text": "About two million."},
            call("Bash", command="sleep 30"),
            {"text": "Hello."},
            call("Read", file_path="README.md"),
            {"text": "It says: The readme"},
        ]
    )
    out = run("streaming_mode.py", tmp_path, server)
    head, session = out.rsplit("Session: ", 1)
    assert head.splitlines() == [
        "=== basic ===",
        "Peri: 4",
        "Result: success",
        "=== multi_turn ===",
        "User: What is the capital of France?",
        "Peri: Paris.",
        "Result: success",
        "User: What is its population?",
        "Peri: About two million.",
        "Result: success",
        "=== interrupt ===",
        "Tool: Bash",
        "Result: error_during_execution (cancelled)",
        "Peri: Hello.",
        "Result: success",
        "=== with_options ===",
        "Tool: Read",
        "Peri: It says: The readme",
        "Result: success",
    ]
    assert len(session.strip()) == 36
    assert "The readme" in json.dumps(sent(server)[-1]["messages"])


def test_streaming_mode_one_example_by_name(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "4"}])
    out = run("streaming_mode.py", tmp_path, server, "basic")
    assert out.splitlines() == ["=== basic ===", "Peri: 4", "Result: success"]


def test_hooks(server: FakeServer, tmp_path: Path) -> None:
    server.set_script(
        [
            call("Bash", command="./foo.sh"),
            {"text": "I may not run foo.sh."},
            call("Bash", command="ls /nowhere"),
            {"text": "The folder is missing."},
            call("Bash", command="env"),
        ]
    )
    out = run("hooks.py", tmp_path, server)
    assert out.splitlines() == [
        "=== PreToolUse ===",
        "Peri: I may not run foo.sh.",
        "Result: success",
        "=== PostToolUse ===",
        "Peri: The folder is missing.",
        "Result: success",
        "=== continue ===",
        "Result: error_during_execution (printing the environment is not allowed)",
    ]
    bodies = json.dumps(sent(server))
    assert "foo.sh is not to be run" in bodies
    assert "The command failed: look at why." in bodies
    assert len(sent(server)) == 5  # the stop ended the prompt: no model call after `env`


def test_tool_permission_callback(server: FakeServer, tmp_path: Path) -> None:
    (tmp_path / "safe_output").mkdir()
    server.set_script(
        [
            call("Write", file_path="notes.txt", content="hi"),
            call("Bash", command="rm -rf build"),
            {"text": "Wrote it; the clean-up was refused."},
        ]
    )
    out = run("tool_permission_callback.py", tmp_path, server)
    assert out.splitlines() == [
        'Asked: Write {"content": "hi", "file_path": "notes.txt"}',
        "Redirected to safe_output/notes.txt",
        'Asked: Bash {"command": "rm -rf build"}',
        "Result: Wrote it; the clean-up was refused.",
        "Denied: ['Bash']",
        "Tools asked about: ['Write', 'Bash']",
    ]
    assert (tmp_path / "safe_output" / "notes.txt").read_text() == "hi"
    assert not (tmp_path / "notes.txt").exists()
    assert "Dangerous command pattern detected" in json.dumps(sent(server)[-1]["messages"])


def test_resume_fork(server: FakeServer, tmp_path: Path) -> None:
    server.set_script(
        [
            {"text": "Noted."},
            {"text": "In vault/deploy."},
            {"text": "In vault/new."},
            {"text": "In vault/deploy, first."},
        ]
    )
    out = run("resume_fork.py", tmp_path, server)
    lines = out.splitlines()
    assert lines[0].startswith("Started: ") and lines[0].endswith(" Noted.")
    assert lines[1:] == [
        "Resumed: same session True: In vault/deploy.",
        "Forked: new session True: In vault/new.",
        "Continued the fork: True: In vault/deploy, first.",
    ]
    asked = [json.dumps(b["messages"]) for b in sent(server)]
    assert "vault/deploy." in asked[1] and "vault/deploy." in asked[2]
    assert "vault/new" in asked[3]  # the continued session is the fork, with its own turn


def test_include_partial_messages(server: FakeServer, tmp_path: Path) -> None:
    poem = "Waves fold into foam / the tide keeps its own counsel / salt on the wind's lip"
    server.set_script([{"thinking": "A sea haiku.", "text": poem, "usage": {"output_tokens": 17}}])
    out = run("include_partial_messages.py", tmp_path, server)
    thinking = "".join(
        line.removeprefix("[thinking] ") for line in out.splitlines() if line.startswith("[")
    )
    assert thinking.strip() == "A sea haiku."
    assert poem in out.replace("\n", "")
    pieces = int(out.strip().splitlines()[-1].split()[0])
    assert pieces > 1  # it streamed in pieces, not as one message
    assert out.strip().endswith(f"{pieces} pieces, 17 tokens")


def test_setting_sources(server: FakeServer, tmp_path: Path) -> None:
    read = call("Read", file_path="secrets.txt")
    server.set_script([read, {"text": "ok"}] * 3)
    out = run("setting_sources.py", tmp_path, server)
    assert out.splitlines() == [
        "None: read",
        "['user']: read",
        "['user', 'project']: denied",
    ]
    results = [json.dumps(b["messages"][-1]) for b in sent(server)[1::2]]
    assert ["the secret is 42" in r for r in results] == [True, True, False]


def test_mcp_calculator(server: FakeServer, tmp_path: Path) -> None:
    def through(tool: str, **params: float) -> list[dict[str, Any]]:
        search = call("SearchExtraTools", query=tool)
        run_it = call("ExecuteExtraTool", tool_name=f"mcp__calc__{tool}", params=params)
        return [search, run_it]

    server.set_script(
        [
            *through("add", a=23, b=19),
            {"text": "42."},
            *through("divide", a=10, b=0),
            {"text": "That cannot be done."},
            *through("sqrt", n=144),
            {"text": "12."},
        ]
    )
    out = run("mcp_calculator.py", tmp_path, server)
    assert out.splitlines() == [
        "User: What is 23 + 19?",
        "Tool: mcp__calc__add",
        "Answer: 23 + 19 = 42",
        "Peri: 42.",
        "Result: success",
        "User: What is 10 divided by 0?",
        "Tool: mcp__calc__divide",
        "Answer: Error: division by zero",
        "Peri: That cannot be done.",
        "Result: success",
        "User: What is the root of 144?",
        "Tool: mcp__calc__sqrt",
        "Answer: sqrt(144) = 12",
        "Peri: 12.",
        "Result: success",
    ]


def test_agents(server: FakeServer, tmp_path: Path) -> None:
    review = {"prompt": "review calc.py", "description": "review", "subagent_type": "code-reviewer"}
    server.set_script(
        [
            {"when": "Use the code-reviewer", "tool_calls": [{"name": "Agent", "input": review}]},
            {"when": "review calc.py", "text": "calc.py:3 divides by zero"},
            {"when": "Use the code-reviewer", "text": "The reviewer found one bug."},
        ]
    )
    out = run("agents.py", tmp_path, server)
    assert out.splitlines() == [
        "Handed to: code-reviewer",
        "Report: calc.py:3 divides by zero",
        "Peri: The reviewer found one bug.",
    ]
    child = sent(server)[1]
    assert "Name each bug with its file and line." in json.dumps(child["system"])
    assert sorted(t["name"] for t in child["tools"]) == ["Glob", "Grep", "Read"]


def test_system_prompt(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "4"}, {"text": "Arr, 4"}, {"text": "4, then a haiku"}])
    out = run("system_prompt.py", tmp_path, server)
    assert out.splitlines() == ["default: 4", "string: Arr, 4", "preset: 4, then a haiku"]
    default, string, preset = (json.dumps(b["system"]) for b in sent(server))
    assert "pirate" not in default and "End with a haiku." not in default
    assert "You are a pirate assistant." in string and len(string) < len(default) / 4
    assert preset.startswith(default[:200]) and "End with a haiku." in preset


def test_tools_option(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "some"}] * 3)
    out = run("tools_option.py", tmp_path, server)
    lines = out.splitlines()
    assert lines[:2] == ["tools=['Read', 'Glob', 'Grep']: ['Glob', 'Grep', 'Read']", "tools=[]: []"]
    every = int(lines[2].split()[2])
    assert every > 3 and lines[2] == f"every tool: {every} of them"
    assert [sorted(t["name"] for t in b.get("tools", [])) for b in sent(server)[:2]] == [
        ["Glob", "Grep", "Read"],
        [],
    ]


def test_structured_output(server: FakeServer, tmp_path: Path) -> None:
    wrong = {"functions": ["divide"], "risk": "extreme"}
    right = {"functions": ["divide"], "risk": "high"}
    server.set_script(
        [
            call("StructuredOutput", **wrong),
            call("StructuredOutput", **right),
            {"text": "Done."},
        ]
    )
    out = run("structured_output.py", tmp_path, server)
    assert out.splitlines() == [
        "Result: success",
        '{"functions": ["divide"], "risk": "high"}',
    ]
    assert "extreme" in json.dumps(sent(server)[1]["messages"][-1])  # what failed went back
