"""SubAgents end to end: the real `peri -p` process, the real SDKs, the fake model server."""

from __future__ import annotations

import json
import signal
import time

from peri_cli.session.children import list_children
from peri_cli.session.transcript import AgentStatus, MessageEntry
from peri_cli.session.transcript_file import load
from tests.e2e.conftest import Peri, system_text, texts


def user_texts(body: dict[str, object]) -> list[str]:
    """Texts of the user messages only (OpenAI puts the system prompt among the messages)."""
    users = [m for m in body["messages"] if m["role"] == "user"]  # type: ignore[index]
    return texts({"messages": users})


def agent_call(prompt: str, **extra: object) -> dict[str, object]:
    return {"name": "Agent", "input": {"prompt": prompt, "description": "a task", **extra}}


def test_a_foreground_child_works_in_its_own_context(peri: Peri, provider: str) -> None:
    peri.provider = provider
    (peri.workspace / "a.py").write_text("X = 42\n")
    peri.server.set_script(
        [
            {"when": "main task", "tool_calls": [agent_call("Find the value of X in a.py")]},
            {
                "when": "Find the value",
                "tool_calls": [
                    {"name": "Grep", "input": {"pattern": "X =", "output_mode": "content"}}
                ],
            },
            {"when": "Find the value", "text": "X is 42 (a.py line 1)."},
            {"when": "main task", "text": "The child found X = 42."},
        ]
    )
    result = peri.json("-p", "main task: delegate", "--permission-mode", "bypass")
    assert not result["is_error"] and result["result"] == "The child found X = 42."
    calls = peri.model_calls()
    parent_first, child_first, _, parent_last = calls
    frozen = load(peri.transcript(result["session_id"])).header.snapshot.system
    assert system_text(parent_first).startswith(frozen)
    assert system_text(child_first).startswith(frozen)  # the parent's frozen bytes, exactly
    assert user_texts(child_first) == ["Find the value of X in a.py"]  # not the history
    assert "X is 42 (a.py line 1)." in json.dumps(parent_last)  # the report came back
    sid = result["session_id"]
    (child,) = list_children(peri.transcript(sid).with_suffix(""))
    assert child.state == "done" and child.path.parent.name == "agents"
    assert child.path.parent.parent.name == sid
    parent_uses = [
        u.name
        for e in load(peri.transcript(sid)).entries
        if isinstance(e, MessageEntry)
        for u in e.message.tool_uses
    ]
    assert parent_uses == ["Agent"]


def test_two_background_children_run_together_and_wake_the_parent(peri: Peri) -> None:
    peri.server.set_script(
        [
            {
                "when": "orchestrate",
                "tool_calls": [
                    agent_call("job one", run_in_background=True),
                    agent_call("job two", run_in_background=True),
                ],
            },
            {"when": "orchestrate", "text": "Both started; waiting for them."},
            {
                "when": "job one",
                "tool_calls": [
                    {
                        "name": "Bash",
                        "input": {
                            "command": "touch one.started; sleep 1; "
                            "test -e two.started && echo overlapped"
                        },
                    }
                ],
            },
            {
                "when": "job two",
                "tool_calls": [
                    {
                        "name": "Bash",
                        "input": {
                            "command": "touch two.started; sleep 1; "
                            "test -e one.started && echo overlapped"
                        },
                    }
                ],
            },
            {"when": "job one", "text": "report one"},
            {"when": "job two", "text": "report two"},
            {"when": "orchestrate", "text": "got a report"},
            {"when": "orchestrate", "text": "got both reports"},
        ]
    )
    done = peri.run(
        "-p", "orchestrate", "--permission-mode", "bypass", "--output-format", "stream-json"
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "result" and not events[-1]["is_error"]
    overlapped = [
        e
        for e in events
        if e.get("agent_id") and e["type"] == "tool_result" and "overlapped" in e["content"]
    ]
    assert len(overlapped) == 2  # each saw the other's file while it ran: they ran together
    sent = json.dumps(peri.model_calls()[-1])
    assert "report one" in sent and "report two" in sent
    states = [e["state"] for e in events if e.get("subtype") == "agent"]
    assert states.count("done") == 2


def test_a_custom_type_restricts_the_childs_tools(peri: Peri) -> None:
    agents = peri.workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reader.md").write_text(
        "---\nname: reader\ndescription: Reads files\ntools:\n  - Read\n---\nOnly read.\n"
    )
    peri.server.set_script(
        [
            {"when": "go", "tool_calls": [agent_call("read things", subagent_type="reader")]},
            {"when": "read things", "text": "read"},
            {"when": "go", "text": "ok"},
        ]
    )
    assert not peri.json("-p", "go")["is_error"]
    child = next(b for b in peri.model_calls() if user_texts(b) == ["read things"])
    assert [t["name"] for t in child["tools"]] == ["Read"]
    assert child["system"][-1]["text"].startswith("Only read.")


def test_ctrl_c_during_a_foreground_child_resumes_cleanly(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"when": "parent", "tool_calls": [agent_call("slow child")]},
            {
                "when": "slow child",
                "tool_calls": [{"name": "Bash", "input": {"command": "sleep 30"}}],
            },
            {"when": "parent", "text": "resumed fine"},
        ]
    )
    proc = peri.popen(
        "-p", "parent", "--permission-mode", "bypass", "--output-format", "stream-json"
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("agent_id") and event["type"] == "tool_use":
            break
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 1
    sid = next(p.stem for p in peri.sessions_dir.glob("*.jsonl"))
    (child,) = list_children(peri.transcript(sid).with_suffix(""))
    assert child.state == "interrupted"
    result = peri.json("-c", "-p", "parent again")
    assert not result["is_error"] and result["result"] == "resumed fine"


def test_kill_9_during_a_background_child_loads_it_as_interrupted(peri: Peri) -> None:
    peri.server.set_script(
        [
            {"when": "parent", "tool_calls": [agent_call("bg child", run_in_background=True)]},
            {"when": "parent", "text": "started"},
            {
                "when": "bg child",
                "tool_calls": [{"name": "Bash", "input": {"command": "sleep 30"}}],
            },
            {"when": "parent", "text": "after the kill"},
        ]
    )
    proc = peri.popen(
        "-p", "parent", "--permission-mode", "bypass", "--output-format", "stream-json"
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("agent_id") and event["type"] == "tool_use":
            break
    proc.kill()
    proc.wait(timeout=10)
    time.sleep(0.1)
    sid = next(p.stem for p in peri.sessions_dir.glob("*.jsonl"))
    (child,) = list_children(peri.transcript(sid).with_suffix(""))
    assert child.state == "interrupted"  # its last status was "running"
    statuses = [e.status for e in load(child.path).entries if isinstance(e, AgentStatus)]
    assert statuses[-1] == "running"
    result = peri.json("-r", sid, "-p", "parent again")
    assert not result["is_error"], result
