"""The agent loop driven by the scripted provider, with the real tools and a real session."""

import asyncio
from pathlib import Path

import pytest

from peri_cli.agent.loop import Agent
from peri_cli.base.events import (
    AssistantMessage,
    PermissionRequested,
    ToolCall,
    ToolFinished,
    TurnEnded,
)
from peri_cli.base.provider import ProviderError
from peri_cli.base.tool import ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.session.store import SessionStore
from peri_cli.session.transcript import MessageEntry, Snapshot
from peri_cli.session.transcript_file import load
from peri_cli.tools import builtin_tools


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    return ws


def make_agent(workspace: Path, replies, *, mode="default", max_turns=None, chain=None):
    store = SessionStore(workspace.parent / "home", workspace)
    session = store.create(Snapshot(system="FROZEN SYSTEM"))
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.add(tool)
    provider = ScriptedProvider(replies)
    agent = Agent(
        session=session,
        provider=provider,
        model="scripted",
        tools=registry,
        policy=PermissionPolicy(mode=mode, workspace=workspace),
        chain=chain or ContributionChain(),
        max_turns=max_turns,
    )
    return agent, provider


async def drive(agent: Agent, prompt: str, answer: str = "deny") -> list:
    events = []
    async for event in agent.run(prompt):
        if isinstance(event, PermissionRequested):
            event.future.set_result(answer)
        events.append(event)
    return events


def messages_on_disk(agent: Agent) -> list:
    return [e.message for e in load(agent.session.path).entries if isinstance(e, MessageEntry)]


async def test_a_plain_answer_is_committed(workspace: Path) -> None:
    agent, provider = make_agent(workspace, [ScriptedReply(text="Hello there")])
    events = await drive(agent, "hi")
    assert isinstance(events[-1], TurnEnded) and events[-1].reason == "done"
    disk = messages_on_disk(agent)
    assert [(m.role, m.text) for m in disk] == [("user", "hi"), ("assistant", "Hello there")]
    assert provider.requests[0].frozen_system == "FROZEN SYSTEM"


async def test_tool_loop_commits_assistant_and_results_together(workspace: Path) -> None:
    replies = [
        ScriptedReply(
            tool_calls=[
                ScriptedCall("Read", {"file_path": "notes.txt"}),
                ScriptedCall("Grep", {"pattern": "beta"}),
            ]
        ),
        ScriptedReply(text="done"),
    ]
    agent, provider = make_agent(workspace, replies)
    events = await drive(agent, "look")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert {f.name for f in finished} == {"Read", "Grep"}
    assert "alpha" in next(f.output for f in finished if f.name == "Read")
    disk = messages_on_disk(agent)
    assert [m.role for m in disk] == ["user", "assistant", "user", "assistant"]
    assert {r.tool_use_id for r in disk[2].tool_results} == {u.id for u in disk[1].tool_uses}
    # the second request carried the results, answering every tool_use
    second = provider.requests[1].messages
    assert second[-1].tool_results and not any(r.is_error for r in second[-1].tool_results)


async def test_permission_allow_and_deny(workspace: Path) -> None:
    call = ScriptedCall("Write", {"file_path": "new.txt", "content": "x"})
    agent, _ = make_agent(workspace, [ScriptedReply(tool_calls=[call]), ScriptedReply(text="ok")])
    events = await drive(agent, "write it", answer="deny")
    assert any(isinstance(e, PermissionRequested) for e in events)
    assert not (workspace / "new.txt").exists()
    denied = next(e for e in events if isinstance(e, ToolFinished))
    assert denied.is_error and "Permission denied" in denied.output

    agent, _ = make_agent(workspace, [ScriptedReply(tool_calls=[call]), ScriptedReply(text="ok")])
    await drive(agent, "write it", answer="allow")
    assert (workspace / "new.txt").read_text() == "x"


async def test_allow_for_session_stops_asking(workspace: Path) -> None:
    calls = [
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": f"echo {i}"})]) for i in range(2)
    ]
    agent, _ = make_agent(workspace, [*calls, ScriptedReply(text="ok")])
    events = await drive(agent, "run", answer="allow_session")
    assert sum(isinstance(e, PermissionRequested) for e in events) == 1
    assert [e.output.strip() for e in events if isinstance(e, ToolFinished)] == ["0", "1"]


async def test_plan_mode_denies_writes_without_asking(workspace: Path) -> None:
    call = ScriptedCall(
        "Edit", {"file_path": "notes.txt", "old_string": "alpha", "new_string": "z"}
    )
    agent, _ = make_agent(
        workspace, [ScriptedReply(tool_calls=[call]), ScriptedReply(text="ok")], mode="plan"
    )
    events = await drive(agent, "edit")
    assert not any(isinstance(e, PermissionRequested) for e in events)
    assert (workspace / "notes.txt").read_text() == "alpha\nbeta\n"


async def test_unknown_tool_and_malformed_arguments_become_error_results(workspace: Path) -> None:
    replies = [
        ScriptedReply(
            tool_calls=[
                ScriptedCall("Teleport", {"to": "mars"}),
                ScriptedCall("Read", {"_raw": "{not json"}),
                ScriptedCall("Read", {"path": "wrong field"}),
            ]
        ),
        ScriptedReply(text="sorry"),
    ]
    agent, provider = make_agent(workspace, replies)
    events = await drive(agent, "go")
    outputs = [e.output for e in events if isinstance(e, ToolFinished)]
    assert "Unknown tool 'Teleport'" in outputs[0]
    assert "not valid JSON" in outputs[1]
    assert "file_path" in outputs[2]
    results = provider.requests[1].messages[-1].tool_results
    assert len(results) == 3 and all(r.is_error for r in results)
    assert isinstance(events[-1], TurnEnded) and events[-1].reason == "done"


async def test_max_turns_stops_the_loop(workspace: Path) -> None:
    loop_forever = [ScriptedReply(tool_calls=[ScriptedCall("Glob", {"pattern": "*"})])] * 5
    agent, provider = make_agent(workspace, loop_forever, max_turns=2)
    events = await drive(agent, "go")
    assert events[-1] == TurnEnded("max_turns", "stopped after 2 model calls (--max-turns)")
    assert len(provider.requests) == 2


async def test_provider_error_ends_the_turn_without_a_half_turn(workspace: Path) -> None:
    agent, _ = make_agent(workspace, [ScriptedReply(error=ProviderError("bad request"))])
    events = await drive(agent, "hi")
    assert events[-1].reason == "error" and "bad request" in events[-1].error
    assert [m.role for m in messages_on_disk(agent)] == ["user"]


async def test_cancel_during_a_tool_leaves_no_half_turn(workspace: Path) -> None:
    call = ScriptedCall("Bash", {"command": "sleep 30"})
    agent, _ = make_agent(
        workspace, [ScriptedReply(tool_calls=[call]), ScriptedReply(text="next")], mode="bypass"
    )
    started = asyncio.Event()

    async def consume() -> None:
        async for event in agent.run("sleep"):
            if isinstance(event, ToolCall):
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert [m.role for m in messages_on_disk(agent)] == ["user"]
    # the session stays usable: the next prompt merges with the dangling one, roles alternate
    events = await drive(agent, "again")
    assert isinstance(events[-2], AssistantMessage) and events[-2].message.text == "next"


async def test_frozen_prefix_is_identical_and_contributions_stay_out_of_the_transcript(
    workspace: Path,
) -> None:
    chain = ContributionChain()
    chain.add("turn", lambda ctx: f"dynamic note for turn {ctx.turn}")
    replies = [
        ScriptedReply(tool_calls=[ScriptedCall("Glob", {"pattern": "*"})]),
        ScriptedReply(text="done"),
    ]
    agent, provider = make_agent(workspace, replies, chain=chain)
    await drive(agent, "go")
    systems = {r.frozen_system for r in provider.requests}
    assert systems == {"FROZEN SYSTEM"}
    assert [r.dynamic_system for r in provider.requests] == [
        "dynamic note for turn 1",
        "dynamic note for turn 2",
    ]
    assert "dynamic note" not in agent.session.path.read_text()
