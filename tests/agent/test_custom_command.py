"""A custom command's turn on the agent (issue 39), with the scripted provider and the real
tools: its model for that turn only, its grants for that turn only, a file gone since start."""

from __future__ import annotations

from pathlib import Path

from peri_cli.agent.custom_command import command_turn
from peri_cli.agent.factory import AgentConfig, AgentFactory
from peri_cli.agent.loop import Agent
from peri_cli.base.events import Event, Notice, PermissionRequested, TurnEnded
from peri_cli.base.model_alias import ALIASES
from peri_cli.base.tool import ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.extensions.custom_commands.catalog import CustomCommand
from peri_cli.extensions.custom_commands.discovery import load_commands
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.providers.scripted import ScriptedProvider, ScriptedReply
from peri_cli.session.store import SessionStore
from peri_cli.session.transcript import Snapshot
from peri_cli.tools import builtin_tools


def agent_in(workspace: Path, replies: list[ScriptedReply]) -> tuple[Agent, ScriptedProvider]:
    store = SessionStore(workspace.parent / "peri-home", workspace)
    provider = ScriptedProvider(replies)

    def tools() -> ToolRegistry:
        registry = ToolRegistry()
        for tool in builtin_tools():
            registry.add(tool)
        return registry

    factory = AgentFactory(
        provider=provider, workspace=workspace, make_tools=tools, make_chain=ContributionChain
    )
    policy = PermissionPolicy(mode="default", workspace=workspace)
    agent = factory.build(store.create(Snapshot(system="S")), AgentConfig("base-model", policy))
    return agent, provider


def user_command(home: Path, workspace: Path, name: str, text: str) -> CustomCommand:
    path = home / ".claude" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    found = load_commands(home=home, workspace=workspace).find(f"/{name}")
    assert found is not None
    return found[0]


async def drain(events: object) -> list[Event]:
    out = []
    async for event in events:  # type: ignore[attr-defined]
        if isinstance(event, PermissionRequested):
            event.future.set_result("deny")
        out.append(event)
    return out


async def test_the_commands_model_is_for_its_turn_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fast = user_command(tmp_path, ws, "fast", "---\nmodel: haiku\n---\nGo\n")
    agent, provider = agent_in(ws, [ScriptedReply(text="a"), ScriptedReply(text="b")])
    await drain(command_turn(agent, fast, "", workspace=ws, provider="anthropic"))
    assert provider.requests[-1].model == ALIASES["haiku"]
    assert agent.model == "base-model"  # restored
    await drain(agent.run("next"))
    assert provider.requests[-1].model == "base-model"


async def test_an_alias_the_provider_has_no_family_for_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fast = user_command(tmp_path, ws, "fast", "---\nmodel: opus\n---\nGo\n")
    agent, provider = agent_in(ws, [ScriptedReply(text="a")])
    events = await drain(command_turn(agent, fast, "", workspace=ws, provider="openai"))
    (note,) = [e for e in events if isinstance(e, Notice)]
    assert "/fast: model alias 'opus'" in note.text and note.level == "warning"
    assert provider.requests[-1].model == "base-model"


async def test_a_file_gone_since_start_ends_the_turn_with_why_and_grants_nothing(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    gone = user_command(tmp_path, ws, "gone", "---\nallowed-tools: Bash(rm:*)\n---\nGo\n")
    gone.path.unlink()
    agent, provider = agent_in(ws, [ScriptedReply(text="a")])
    events = await drain(command_turn(agent, gone, "", workspace=ws, provider="anthropic"))
    (ended,) = [e for e in events if isinstance(e, TurnEnded)]
    assert ended.reason == "error" and "gone.md" in (ended.error or "")
    assert provider.requests == [] and agent.policy.turn_rules == {}


async def test_the_grant_ends_with_the_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    grant = user_command(tmp_path, ws, "touchy", "---\nallowed-tools: Bash(touch:*)\n---\nT\n")
    agent, _ = agent_in(ws, [ScriptedReply(text="a")])
    seen: list[int] = []

    async def watch() -> None:
        async for event in command_turn(agent, grant, "", workspace=ws, provider="anthropic"):
            seen.append(len(agent.policy.turn_rules.get(None, [])))
            if isinstance(event, PermissionRequested):
                event.future.set_result("deny")

    await watch()
    assert seen and seen[0] == 1  # granted while it ran
    assert agent.policy.turn_rules.get(None, []) == []
