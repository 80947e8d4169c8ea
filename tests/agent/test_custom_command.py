"""A custom command's turn on the agent (issue 39), with the scripted provider and the real
tools: its model for that turn only, its grants for that turn only, a file gone since start."""

from __future__ import annotations

from pathlib import Path

from peri_cli.agent.custom_command import MAX_BANG_LINES, MAX_BANG_OUTPUT, command_turn
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


def agent_in(
    workspace: Path, replies: list[ScriptedReply], mode: str = "default"
) -> tuple[Agent, ScriptedProvider]:
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
    policy = PermissionPolicy(mode=mode, workspace=workspace)  # type: ignore[arg-type]
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


def last_prompt(provider: ScriptedProvider) -> str:
    return provider.requests[-1].messages[-1].text


async def test_a_command_runs_at_most_so_many_bang_lines(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    body = "".join(f"{i}: !`echo line{i}`\n" for i in range(MAX_BANG_LINES + 2))
    many = user_command(tmp_path, ws, "many", body)
    agent, provider = agent_in(ws, [ScriptedReply(text="a")], mode="bypass")
    await drain(command_turn(agent, many, "", workspace=ws, provider="anthropic"))
    sent = last_prompt(provider)
    assert f"{MAX_BANG_LINES - 1}: line{MAX_BANG_LINES - 1}\n" in sent
    assert sent.count(f"[not run: a command runs at most {MAX_BANG_LINES} ! lines]") == 2


async def test_all_the_bang_lines_outputs_together_are_capped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    body = "".join(f"!`seq {i} 100000`\n" for i in range(1, 6))  # each ~30k after Bash's cap
    big = user_command(tmp_path, ws, "big", body)
    agent, provider = agent_in(ws, [ScriptedReply(text="a")], mode="bypass")
    await drain(command_turn(agent, big, "", workspace=ws, provider="anthropic"))
    sent = last_prompt(provider)
    assert len(sent) < MAX_BANG_OUTPUT + 1000
    assert f"[cut: a command's ! lines give at most {MAX_BANG_OUTPUT} characters in all]" in sent
