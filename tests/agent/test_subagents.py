"""SubAgents with the scripted provider and the real tools: context, transcripts, types,
background reports, one writer per file, stopping."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from peri_cli.agent.factory import AgentConfig, AgentFactory
from peri_cli.agent.loop import Agent
from peri_cli.agent.subagents import SubagentManager
from peri_cli.base.events import PermissionRequested, ToolCall, ToolFinished
from peri_cli.base.provider import ModelRequest
from peri_cli.base.tool import ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.extensions.agent_types import AgentCatalog, discover_agent_types
from peri_cli.extensions.extra_tools import offer_extra_tools
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.session.children import list_children
from peri_cli.session.store import SessionStore
from peri_cli.session.transcript import AgentStatus, MessageEntry, Snapshot
from peri_cli.session.transcript_file import load
from peri_cli.tools import builtin_tools
from peri_cli.tools.agent import AgentTool

FROZEN = "FROZEN PARENT SYSTEM"


def first_user_text(request: ModelRequest) -> str:
    return request.messages[0].text if request.messages else ""


def setup(
    workspace: Path, replies, *, mode: str = "bypass", catalog: AgentCatalog | None = None
) -> tuple[Agent, SubagentManager, ScriptedProvider]:
    store = SessionStore(workspace.parent / "home", workspace)
    session = store.create(Snapshot(system=FROZEN))
    catalog = catalog or discover_agent_types(workspace, workspace.parent / "nohome")
    agent_tool = AgentTool(catalog)
    provider = ScriptedProvider(list(replies))

    def make_tools() -> ToolRegistry:
        registry = ToolRegistry()
        for tool in builtin_tools():
            registry.add(tool)
        registry.add(agent_tool)
        offer_extra_tools(registry)
        return registry

    factory = AgentFactory(
        provider=provider,
        workspace=workspace,
        make_tools=make_tools,
        make_chain=ContributionChain,
    )
    policy = PermissionPolicy(mode=mode, workspace=workspace)  # type: ignore[arg-type]
    agent = factory.build(session, AgentConfig(model="scripted", policy=policy))
    manager = SubagentManager(agent, factory, catalog)
    agent_tool.runner = manager
    return agent, manager, provider


async def drive(agent: Agent, prompt: str | None) -> list:
    events = []
    async for event in agent.run(prompt):
        if isinstance(event, PermissionRequested):
            event.future.set_result("deny")
        events.append(event)
    return events


def agent_call(prompt: str, **extra) -> ScriptedCall:
    return ScriptedCall("Agent", {"prompt": prompt, "description": "look around", **extra})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("print('a')\n")
    return ws


async def test_a_child_gets_the_frozen_bytes_and_the_task_not_the_history(workspace: Path) -> None:
    replies = [
        ScriptedReply(text="earlier answer"),
        ScriptedReply(tool_calls=[agent_call("Find where a.py prints")]),
        ScriptedReply(tool_calls=[ScriptedCall("Read", {"file_path": "a.py"})]),  # the child
        ScriptedReply(text="a.py prints 'a' on line 1."),  # the child's report
        ScriptedReply(text="The child says line 1."),
    ]
    agent, manager, provider = setup(workspace, replies)
    await drive(agent, "an earlier question with a SECRET detail")
    events = await drive(agent, "delegate it")
    child_first = provider.requests[2]
    assert child_first.frozen_system == FROZEN
    assert [m.text for m in child_first.messages] == ["Find where a.py prints"]
    assert "SECRET" not in json.dumps([m.model_dump() for m in child_first.messages])
    assert child_first.dynamic_system.startswith("You are a SubAgent")
    assert [t.name for t in child_first.tools] == [t.name for t in provider.requests[1].tools]
    (done,) = [e for e in events if isinstance(e, ToolFinished) and e.name == "Agent"]
    assert "a.py prints 'a' on line 1." in done.output and not done.is_error
    # the parent's transcript has only the call and the report; the child has its own file
    parent_uses = [
        u.name
        for e in load(agent.session.path).entries
        if isinstance(e, MessageEntry)
        for u in e.message.tool_uses
    ]
    assert parent_uses == ["Agent"]  # the child's Read stays in the child's transcript
    (child,) = manager.children.values()
    path = agent.session.dir / "agents" / f"{child.id}.jsonl"
    loaded = load(path)
    assert loaded.header.agent is not None
    assert loaded.header.agent.parent_session == agent.session.id
    assert loaded.header.agent.tool_use_id == done.id and loaded.header.agent.type == "general"
    assert [e.status for e in loaded.entries if isinstance(e, AgentStatus)] == [
        "queued",
        "running",
        "done",
    ]
    assert child.usage.output_tokens > 0
    assert agent.usage_total.output_tokens >= child.usage.output_tokens


async def test_general_refuses_a_nested_agent_call(workspace: Path) -> None:
    replies = [
        ScriptedReply(tool_calls=[agent_call("do it")]),
        ScriptedReply(tool_calls=[agent_call("nested")]),
        ScriptedReply(text="could not nest"),
        ScriptedReply(text="ok"),
    ]
    agent, _manager, provider = setup(workspace, replies)
    await drive(agent, "go")
    nested_result = provider.requests[2].messages[-1].tool_results[0]
    assert nested_result.is_error and "cannot start SubAgents" in nested_result.text


async def test_explore_lists_only_read_only_tools_and_unknown_types_are_refused(
    workspace: Path,
) -> None:
    replies = [
        ScriptedReply(
            tool_calls=[
                agent_call("look", subagent_type="explore"),
                agent_call("x", subagent_type="nope"),
            ]
        ),
        ScriptedReply(text="explored"),
        ScriptedReply(text="ok"),
    ]
    agent, _, provider = setup(workspace, replies)
    events = await drive(agent, "go")
    child = next(r for r in provider.requests if first_user_text(r) == "look")
    read_only = sorted(t.name for t in agent.tools.direct.values() if t.traits.read_only)
    assert sorted(t.name for t in child.tools) == read_only  # what the tools say of themselves
    assert {"Glob", "Grep", "Read"} <= set(read_only)
    assert not {"Write", "Edit", "Bash", "Agent"} & set(read_only)
    bad = [e for e in events if isinstance(e, ToolFinished) and e.is_error]
    assert "Unknown subagent_type 'nope'" in bad[0].output and "explore, general" in bad[0].output


async def test_a_custom_type_restricts_tools_and_a_broken_one_is_reported(
    workspace: Path,
) -> None:
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: |-\n  Reviews code\ntools: Read, Grep\nmaxTurns: 3\n"
        "---\nYou review code and list problems.\n"
    )
    (agents / "broken.md").write_text("---\nname: broken\n---\nno description\n")
    catalog = discover_agent_types(workspace, workspace.parent / "nohome")
    assert "reviewer" in catalog.types and "broken" not in catalog.types
    assert any("broken.md" in p and "description" in p for p in catalog.problems)
    replies = [
        ScriptedReply(tool_calls=[agent_call("review a.py", subagent_type="reviewer")]),
        ScriptedReply(text="looks fine"),
        ScriptedReply(text="ok"),
    ]
    agent, _, provider = setup(workspace, replies, catalog=catalog)
    await drive(agent, "go")
    child = provider.requests[1]
    assert sorted(t.name for t in child.tools) == ["Grep", "Read"]
    assert child.dynamic_system.startswith("You review code and list problems.")


async def test_a_model_alias_without_a_family_runs_on_the_parents_model_and_says_so(
    workspace: Path,
) -> None:
    """Issue 39: `model: sonnet` is Claude Code's alias; a provider without that family (the
    scripted one, as OpenAI) runs the child on the parent's model, with a note in its state."""
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "quick.md").write_text("---\ndescription: Quick\nmodel: sonnet\n---\nBe quick.\n")
    catalog = discover_agent_types(workspace, workspace.parent / "nohome")
    replies = [
        ScriptedReply(tool_calls=[agent_call("be quick", subagent_type="quick")]),
        ScriptedReply(text="quick"),
        ScriptedReply(text="ok"),
    ]
    agent, manager, provider = setup(workspace, replies, catalog=catalog)
    await drive(agent, "go")
    assert provider.requests[1].model == "scripted" == agent.model  # not the id "sonnet"
    (child,) = manager.children.values()
    states = [e for e in load(child.agent.session.path).entries if isinstance(e, AgentStatus)]  # type: ignore[union-attr]
    (running,) = [s for s in states if s.status == "running"]
    assert "model alias 'sonnet'" in running.detail and "type quick" in running.detail


async def test_background_children_run_together_and_their_reports_wake_the_parent(
    workspace: Path,
) -> None:
    both_started = asyncio.Event()
    started: set[str] = set()

    def reply(request: ModelRequest) -> ScriptedReply:
        text = first_user_text(request)
        if text in ("task one", "task two") and len(request.messages) == 1:
            started.add(text)
            if len(started) == 2:
                both_started.set()
            return ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 0.3"})])
        if text in ("task one", "task two"):
            return ScriptedReply(text=f"report of {text}")
        if "report of" in json.dumps([m.model_dump() for m in request.messages]):
            return ScriptedReply(text="both reports read")
        if len(request.messages) > 1:
            return ScriptedReply(text="started both; waiting")
        return ScriptedReply(
            tool_calls=[
                agent_call("task one", run_in_background=True),
                agent_call("task two", run_in_background=True),
            ]
        )

    agent, manager, provider = setup(workspace, [reply] * 12)
    events = await drive(agent, "start two")
    started_msgs = [e.output for e in events if isinstance(e, ToolFinished)]
    assert all("in the background" in m for m in started_msgs)
    await asyncio.wait_for(both_started.wait(), 10)  # both ran at the same time
    while manager.busy():
        await asyncio.wait_for(manager.next_report(), 10)
    assert len(agent.inbox) == 2
    await drive(agent, None)  # the reports wake the parent
    last = provider.requests[-1]
    sent = json.dumps([m.model_dump() for m in last.messages])
    assert "report of task one" in sent and "report of task two" in sent
    assert not agent.inbox


async def test_more_than_three_background_children_wait_their_turn(workspace: Path) -> None:
    gate = asyncio.Event()
    running = 0
    peak = 0

    async def slow(request: ModelRequest) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await gate.wait()
        running -= 1

    class Gated(ScriptedProvider):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            if first_user_text(request).startswith("job") and len(request.messages) == 1:
                await slow(request)
            async for event in super().stream(request):
                yield event

    agent, manager, _ = setup(workspace, [])
    agent.provider = Gated(
        [
            ScriptedReply(
                tool_calls=[agent_call(f"job {i}", run_in_background=True) for i in range(5)]
            ),
            ScriptedReply(text="started"),
        ]
    )
    manager.factory.provider = agent.provider
    events = await drive(agent, "five jobs")
    outputs = [e.output for e in events if isinstance(e, ToolFinished)]
    assert sum("queued" in o for o in outputs) == 2
    await asyncio.sleep(0.2)
    assert peak == 3
    gate.set()
    while manager.busy():
        await asyncio.wait_for(manager.next_report(), 10)
    assert len(agent.inbox) == 5


async def test_a_second_writer_of_a_held_file_is_refused(workspace: Path) -> None:
    def reply(request: ModelRequest) -> ScriptedReply:
        text = first_user_text(request)
        n = len(request.messages)
        if text == "writer A" and n == 1:
            return ScriptedReply(
                tool_calls=[ScriptedCall("Write", {"file_path": "shared.txt", "content": "A"})]
            )
        if text == "writer A" and n == 3:
            return ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 0.6"})])
        if text == "writer B" and n == 1:
            return ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 0.3"})])
        if text == "writer B" and n == 3:
            return ScriptedReply(
                tool_calls=[ScriptedCall("Write", {"file_path": "shared.txt", "content": "B"})]
            )
        if text.startswith("writer"):
            return ScriptedReply(text=f"{text} done")
        if n == 1:
            return ScriptedReply(tool_calls=[agent_call("writer A"), agent_call("writer B")])
        return ScriptedReply(text="ok")

    agent, _manager, provider = setup(workspace, [reply] * 12)
    await drive(agent, "two writers")
    assert (workspace / "shared.txt").read_text() == "A"
    b_results = [
        r
        for req in provider.requests
        if first_user_text(req) == "writer B"
        for m in req.messages
        for r in m.tool_results
    ]
    refused = [r for r in b_results if r.is_error]
    assert refused and "being written by SubAgent general: look around" in refused[0].text
    # released when A ended: the parent may write it now
    assert agent.tool_ctx.owners.holder((workspace / "shared.txt").resolve()) is None


async def test_cancelling_the_parent_marks_a_foreground_child_interrupted(
    workspace: Path,
) -> None:
    replies = [
        ScriptedReply(tool_calls=[agent_call("long job")]),
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "sleep 30"})]),
    ]
    agent, manager, _ = setup(workspace, replies)
    seen = asyncio.Event()
    manager_events = []

    async def watch() -> None:
        async for event in manager.events():
            manager_events.append(event)
            if isinstance(event.event, ToolCall) and event.event.name == "Bash":
                seen.set()

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)
    task = asyncio.create_task(drive(agent, "go"))
    await asyncio.wait_for(seen.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    watcher.cancel()
    (record,) = list_children(agent.session.dir)
    assert record.state == "interrupted"
    assert agent.last_interruption and "Agent" in agent.last_interruption


def test_a_child_left_running_loads_as_interrupted(workspace: Path) -> None:
    from peri_cli.session.children import create_child
    from peri_cli.session.transcript import AgentRef

    store = SessionStore(workspace.parent / "home", workspace)
    parent = store.create(Snapshot(system=FROZEN))
    child = create_child(
        parent, "c1", AgentRef(parent_session=parent.id, tool_use_id="t", type="general")
    )
    child.append(AgentStatus(status="running"))
    child.close()  # as after kill -9: no final status
    (record,) = list_children(parent.dir)
    assert record.state == "interrupted"
    forked = store.fork(parent.id)
    assert [r.id for r in list_children(forked.dir)] == ["c1"]


async def test_a_childs_permission_request_is_labelled(workspace: Path) -> None:
    replies = [
        ScriptedReply(tool_calls=[agent_call("write it")]),
        ScriptedReply(tool_calls=[ScriptedCall("Write", {"file_path": "x", "content": "x"})]),
        ScriptedReply(text="denied"),
        ScriptedReply(text="ok"),
    ]
    agent, manager, _ = setup(workspace, replies, mode="default")
    asked: list[PermissionRequested] = []

    async def answer() -> None:
        async for event in manager.events():
            if isinstance(event.event, PermissionRequested):
                asked.append(event.event)
                event.event.future.set_result("deny")

    watcher = asyncio.create_task(answer())
    await asyncio.sleep(0)
    await drive(agent, "go")
    watcher.cancel()
    assert asked and asked[0].agent == "general: look around" and asked[0].tool == "Write"
    assert not (workspace / "x").exists()


def test_hostile_agent_files_are_reported_and_skipped(workspace: Path) -> None:
    import os

    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "deep.md").write_text("---\nname: deep\ndescription: x\nx: " + "[" * 5000 + "\n---\n")
    (agents / "laughs.md").write_text(
        "---\nname: laughs\ndescription: x\na: &a [1, 1]\nb: [*a, *a]\n---\n"
    )
    (agents / "huge.md").write_text("---\nname: huge\ndescription: x\n---\n" + "x" * 200_000)
    os.mkfifo(agents / "fifo.md")
    outside = workspace.parent / "outside.md"
    outside.write_text("---\nname: outside\ndescription: from elsewhere\n---\n")
    (agents / "link.md").symlink_to(outside)
    catalog = discover_agent_types(workspace, workspace.parent / "nohome")
    assert set(catalog.types) == {"general", "explore"}
    problems = "\n".join(catalog.problems)
    for name in ("deep.md", "laughs.md", "huge.md", "fifo.md", "link.md"):
        assert name in problems, problems


async def test_a_subagent_cannot_ask_the_user(workspace: Path) -> None:
    """A SubAgent's AskUserQuestion is refused before anyone is asked: the question would reach
    the user without the child's context; the child is told to report what needs deciding."""
    question = {
        "questions": [
            {
                "question": "Which database?",
                "header": "Database",
                "options": [{"label": "Postgres"}, {"label": "SQLite"}],
                "multiSelect": False,
            }
        ]
    }
    replies = [
        ScriptedReply(tool_calls=[agent_call("pick a database")]),
        ScriptedReply(tool_calls=[ScriptedCall("AskUserQuestion", question)]),  # the child
        ScriptedReply(text="the user must pick the database"),
        ScriptedReply(text="ok"),
    ]
    agent, _manager, provider = setup(workspace, replies)
    events = await drive(agent, "go")
    result = provider.requests[2].messages[-1].tool_results[0]
    assert result.is_error and "A SubAgent cannot ask the user" in result.text
    assert not [e for e in events if isinstance(e, PermissionRequested)]
