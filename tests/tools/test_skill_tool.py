"""The Skill tool: a skill's body by name, where it lives, and errors the model can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.agent.loop import Agent
from peri_cli.base.events import ToolFinished
from peri_cli.base.messages import TextPart
from peri_cli.base.tool import ToolContext, ToolError, ToolOutput, ToolRegistry
from peri_cli.context.contributions import ContributionChain
from peri_cli.extensions.skills.catalog import SkillCatalog, SkillRoot
from peri_cli.extensions.skills.discovery import discover_skills
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.session.store import SessionStore
from peri_cli.session.transcript import Snapshot
from peri_cli.tools import builtin_tools
from peri_cli.tools.skill import SkillTool


def text_of(out: ToolOutput) -> str:
    return "".join(p.text for p in out.content if isinstance(p, TextPart))


def write_skill(root: Path, name: str, front: str = "", body: str = "Steps.\n") -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: About {name}.\n{front}---\n{body}")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "home" / ".claude" / "skills"
    path.mkdir(parents=True)
    return path


def catalog(root: Path) -> SkillCatalog:
    return discover_skills([SkillRoot(root, "personal", "~/.claude/skills")], workspace=None)


async def call(tool: SkillTool, ctx: ToolContext, **raw: object) -> ToolOutput:
    return await tool.call(tool.validate(dict(raw)), ctx)


def test_spec_has_the_contract_input() -> None:
    spec = SkillTool(SkillCatalog()).spec()
    assert spec.name == "Skill"
    assert spec.input_schema["required"] == ["name"]
    assert set(spec.input_schema["properties"]) == {"name", "args"}
    assert SkillTool(SkillCatalog()).kind == "read"


def test_missing_name_is_a_tool_error() -> None:
    with pytest.raises(ToolError):
        SkillTool(SkillCatalog()).validate({})


async def test_returns_the_body_and_where_the_skill_lives(root: Path, ctx: ToolContext) -> None:
    path = write_skill(root, "pdf", body="Run scripts/fill.py on the form.\n")
    out = await call(SkillTool(catalog(root)), ctx, name="pdf")
    assert not out.is_error
    text = text_of(out)
    assert "Run scripts/fill.py on the form." in text
    assert f"Base directory for this skill: {path.parent}" in text
    assert "About pdf." not in text  # the front matter is not repeated


async def test_arguments_are_substituted(root: Path, ctx: ToolContext) -> None:
    write_skill(root, "fix", body="Fix issue $ARGUMENTS.\n")
    out = await call(SkillTool(catalog(root)), ctx, name="fix", args="42")
    assert "Fix issue 42." in text_of(out)


async def test_a_leading_slash_is_forgiven(root: Path, ctx: ToolContext) -> None:
    write_skill(root, "pdf")
    out = await call(SkillTool(catalog(root)), ctx, name="/pdf")
    assert not out.is_error


async def test_unknown_name_lists_the_valid_ones(root: Path, ctx: ToolContext) -> None:
    write_skill(root, "pdf")
    write_skill(root, "xlsx")
    write_skill(root, "deploy", "disable-model-invocation: true\n")
    out = await call(SkillTool(catalog(root)), ctx, name="docx")
    assert out.is_error
    text = text_of(out)
    assert "docx" in text and "pdf, xlsx" in text
    assert "deploy" not in text


async def test_a_user_only_skill_is_not_offered_to_the_model(root: Path, ctx: ToolContext) -> None:
    write_skill(root, "deploy", "disable-model-invocation: true\n", body="Push to prod.\n")
    out = await call(SkillTool(catalog(root)), ctx, name="deploy")
    assert out.is_error
    assert "Push to prod." not in text_of(out)
    assert "/deploy" in text_of(out)  # the model can suggest the user run it


async def test_no_skills_at_all_says_so(ctx: ToolContext) -> None:
    out = await call(SkillTool(SkillCatalog()), ctx, name="pdf")
    assert out.is_error and "No skills" in text_of(out)


async def test_a_skill_that_vanished_is_an_error_result(root: Path, ctx: ToolContext) -> None:
    path = write_skill(root, "gone")
    tool = SkillTool(catalog(root))
    path.unlink()
    out = await call(tool, ctx, name="gone")
    assert out.is_error and "gone" in text_of(out)


async def test_model_loads_a_skill_then_reads_a_file_beside_it(root: Path, tmp_path: Path) -> None:
    """Through the real loop: Skill returns the body and the path, Read opens the file beside."""
    path = write_skill(root, "forms", body="Read reference.md before filling a form.\n")
    (path.parent / "reference.md").write_text("Field A is the name.\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    registry = ToolRegistry()
    for tool in [*builtin_tools(), SkillTool(catalog(root))]:
        registry.add(tool)
    replies = [
        ScriptedReply(tool_calls=[ScriptedCall("Skill", {"name": "forms"})]),
        ScriptedReply(
            tool_calls=[ScriptedCall("Read", {"file_path": str(path.parent / "reference.md")})]
        ),
        ScriptedReply(text="Field A is the name."),
    ]
    provider = ScriptedProvider(replies)
    agent = Agent(
        session=SessionStore(tmp_path / "peri", workspace).create(Snapshot(system="S")),
        provider=provider,
        model="scripted",
        tools=registry,
        policy=PermissionPolicy(mode="default", workspace=workspace),
        chain=ContributionChain(),
    )
    finished = [e async for e in agent.run("fill the form") if isinstance(e, ToolFinished)]
    assert [f.name for f in finished] == ["Skill", "Read"]
    assert not any(f.is_error for f in finished)
    assert "Read reference.md before filling a form." in finished[0].output
    assert "Field A is the name." in finished[1].output
    assert any(s.name == "Skill" for s in provider.requests[0].tools)


async def test_allowed_tools_are_pre_approved_while_the_skill_runs(tmp_path: Path) -> None:
    """A personal skill's allowed-tools run without asking during the turn that loaded it; a
    project skill's only in a trusted workspace; the grant ends with the turn."""
    from peri_cli.agent.factory import AgentConfig, AgentFactory
    from peri_cli.base.events import PermissionRequested, ToolFinished
    from peri_cli.base.tool import ToolRegistry
    from peri_cli.extensions.skills.discovery import load_skills
    from peri_cli.permissions.policy import PermissionPolicy
    from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
    from peri_cli.session.store import SessionStore
    from peri_cli.session.transcript import Snapshot
    from peri_cli.tools import builtin_tools

    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    for root, name in (
        (home / ".claude" / "skills", "mine"),
        (ws / ".claude" / "skills", "theirs"),
    ):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: d\nallowed-tools: Bash(echo:*)\n---\nbody\n"
        )
    catalog = load_skills(home=home, peri_home=tmp_path / "peri", workspace=ws)

    async def run(skill: str, trusted: bool) -> list[object]:
        replies = [
            ScriptedReply(tool_calls=[ScriptedCall("Skill", {"name": skill})]),
            ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "echo granted"})]),
            ScriptedReply(text="done"),
        ]
        tools = ToolRegistry()
        for tool in [*builtin_tools(), SkillTool(catalog)]:
            tools.add(tool)
        factory = AgentFactory(ScriptedProvider(replies), ws, lambda: tools)
        policy = PermissionPolicy(mode="default", workspace=ws, trusted=trusted)
        store = SessionStore(tmp_path / "sessions", ws)
        session = store.create(Snapshot(system="s"))
        agent = factory.build(session, AgentConfig(model="scripted", policy=policy))
        events = [e async for e in _answering(agent.run("go"))]
        assert not agent.policy.turn_rules  # the grant ended with the turn
        return events

    async def _answering(events):  # type: ignore[no-untyped-def]
        async for event in events:
            if isinstance(event, PermissionRequested):
                event.future.set_result("deny")
            yield event

    def ran(events: list[object]) -> bool:
        return any(
            isinstance(e, ToolFinished) and "granted" in e.output and not e.is_error for e in events
        )

    assert ran(await run("mine", trusted=False))
    assert not ran(await run("theirs", trusted=False))
    assert ran(await run("theirs", trusted=True))
