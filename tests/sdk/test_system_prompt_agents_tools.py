"""`PeriOptions.system_prompt`, `agents` and `tools`: the Claude Agent SDK's three options that
decide what the model is told and offered, through the fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from peri_cli.context.snapshot import base_section, tool_note
from peri_cli.sdk import (
    AgentDefinition,
    OptionError,
    PeriClient,
    PeriOptions,
    ResultEvent,
    SystemEvent,
    query,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for

GUIDE = "Always run the linter before you finish."


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in body.get("system", []))


def frozen_system(body: dict[str, Any]) -> str:
    """The frozen part: the first system block (request-time contributions come after it)."""
    return str(body["system"][0]["text"])


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def user_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        out += [b if isinstance(b, str) else b.get("text", "") for b in blocks]
    return [t for t in out if t]


async def _run(prompt: str, options: PeriOptions) -> ResultEvent:
    events = [e async for e in query(prompt, options)]
    result = events[-1]
    assert isinstance(result, ResultEvent), events
    assert not result.is_error, result.result
    return result


# --- system_prompt -------------------------------------------------------------------------------


async def test_a_string_system_prompt_is_the_whole_frozen_prompt(
    server: FakeServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "AGENTS.md").write_text(GUIDE + "\n")
    server.set_script([{"text": "default"}, {"text": "custom"}])
    await _run("hi", options_for(server, tmp_path))
    await _run("hi", options_for(server, tmp_path, system_prompt="You are a terse bot."))
    default_body, custom_body = model_calls(server)
    # the default prompt carries Peri's sections, the guide and the environment ...
    assert base_section("identity") in system_text(default_body)
    assert GUIDE in system_text(default_body)
    # ... the string replaces all of them
    assert frozen_system(custom_body) == "You are a terse bot.\n"
    sent = system_text(custom_body)
    assert base_section("identity") not in sent and base_section("safety") not in sent
    assert GUIDE not in sent and "# Environment" not in sent and "# Tools" not in sent
    assert tool_names(custom_body) == tool_names(default_body)  # the tools are not affected


async def test_a_string_system_prompt_takes_append_system_prompt_after_it(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "ok"}])
    options = options_for(
        server, tmp_path, system_prompt="Be brief.", append_system_prompt="Answer in French."
    )
    await _run("hi", options)
    assert frozen_system(model_calls(server)[0]) == "Be brief.\n\nAnswer in French.\n"


async def test_the_preset_is_peris_prompt_with_the_text_appended(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    preset = {"type": "preset", "preset": "peri", "append": "Always answer in haiku."}
    await _run("hi", options_for(server, tmp_path, system_prompt=preset))
    await _run(
        "hi",
        options_for(server, tmp_path, system_prompt={**preset, "preset": "claude_code"}),
    )
    await _run("hi", options_for(server, tmp_path))
    peri, claude_code, plain = (frozen_system(b) for b in model_calls(server))
    assert base_section("identity") in peri and "# Environment" in peri
    assert peri.rstrip().endswith("Always answer in haiku.")
    assert claude_code == peri  # `claude_code` is an alias: ported programs get Peri's prompt
    assert peri.startswith(plain.rstrip())  # the preset without `append` is the default prompt


async def test_a_resumed_session_keeps_the_prompt_it_was_created_with(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "first"}, {"text": "second"}, {"text": "third"}])
    async with PeriClient(options_for(server, tmp_path, system_prompt="Custom A.")) as client:
        await client.send("one")
        _ = [e async for e in client.events()]
        session_id = client.session_id
    for other in ("Other B.", None):
        resumed = options_for(server, tmp_path, resume=session_id, system_prompt=other)
        await _run("again", resumed)
    for body in model_calls(server):
        assert frozen_system(body) == "Custom A.\n"
        assert "Other B." not in system_text(body)


# --- agents --------------------------------------------------------------------------------------


def _agent_call(prompt: str, kind: str) -> dict[str, Any]:
    return {
        "name": "Agent",
        "input": {"prompt": prompt, "description": "a review", "subagent_type": kind},
    }


async def test_a_programs_agent_definition_is_a_subagent_type(
    server: FakeServer, tmp_path: Path
) -> None:
    files = tmp_path / "ws" / ".claude" / "agents"
    files.mkdir(parents=True)
    (files / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: from the file\n---\nThe file's prompt.\n"
    )
    server.set_script(
        [
            {"when": "go", "tool_calls": [_agent_call("review a.py", "reviewer")]},
            {"when": "review a.py", "text": "looks fine"},
            {"when": "go", "text": "done"},
        ]
    )
    reviewer = AgentDefinition(
        description="Reviews code for bugs",
        prompt="You review code. Report bugs only.",
        tools=["Read", "Grep"],
        model="haiku",
    )
    await _run("go", options_for(server, tmp_path, agents={"reviewer": reviewer}))
    parent, child, _ = model_calls(server)
    agent_tool = next(t for t in parent["tools"] if t["name"] == "Agent")
    assert "Reviews code for bugs" in agent_tool["description"]
    assert "from the file" not in agent_tool["description"]  # the program's definition wins
    assert user_texts(child) == ["review a.py"]
    assert system_text(child).rstrip().endswith("You review code. Report bugs only.")
    assert "The file's prompt." not in system_text(child)
    assert tool_names(child) == ["Read", "Grep"]
    assert child["model"] == "claude-haiku-4-5" and parent["model"] != child["model"]


async def test_an_agent_without_tools_or_model_inherits_the_parents(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script(
        [
            {"when": "go", "tool_calls": [_agent_call("check it", "checker")]},
            {"when": "check it", "text": "checked"},
            {"when": "go", "text": "done"},
        ]
    )
    checker = AgentDefinition(description="Checks", prompt="You check.", model="inherit")
    await _run("go", options_for(server, tmp_path, agents={"checker": checker}))
    parent, child, _ = model_calls(server)
    assert child["model"] == parent["model"]
    assert "Read" in tool_names(child) and "Bash" in tool_names(child)


# --- tools ---------------------------------------------------------------------------------------


async def test_tools_restricts_the_built_in_tools_the_model_sees(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "ok"}, {"text": "ok"}, {"text": "ok"}])
    events = [
        e async for e in query("hi", options_for(server, tmp_path / "a", tools=["Read", "Grep"]))
    ]
    init = events[0]
    assert isinstance(init, SystemEvent) and sorted(init.data["tools"]) == ["Grep", "Read"]
    await _run("hi", options_for(server, tmp_path / "b", tools=[]))
    await _run("hi", options_for(server, tmp_path / "c"))
    only, none, every = model_calls(server)
    # nothing deferred is left, so the extra-tool wrappers are not offered either
    assert tool_names(only) == ["Read", "Grep"]
    assert tool_names(none) == []
    assert {"Read", "Grep", "Bash", "Write", "Edit"} <= set(tool_names(every))
    # the prompt's `# Tools` section tells of no tool the model was not given
    assert tool_note("shell") in frozen_system(every) and tool_note("files") in frozen_system(only)
    assert tool_note("shell") not in frozen_system(only)
    assert tool_note("subagents") not in frozen_system(only)


async def test_the_tools_preset_keeps_every_tool(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "ok"}, {"text": "ok"}])
    preset = {"type": "preset", "preset": "claude_code"}
    await _run("hi", options_for(server, tmp_path / "a", tools=preset))
    await _run("hi", options_for(server, tmp_path / "b"))
    with_preset, default = model_calls(server)
    assert tool_names(with_preset) == tool_names(default)


# --- bad shapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "option", "words"),
    [
        ({"tools": ["Read", "Nope"]}, "tools", ["'Nope'", "Grep", "Bash"]),
        ({"tools": ["Task"]}, "tools", ["Agent"]),
        ({"tools": "Read"}, "tools", ["list"]),
        ({"tools": {"type": "preset", "preset": "peri-lite"}}, "tools", ["claude_code"]),
        ({"system_prompt": {"type": "preset", "preset": "gpt"}}, "system_prompt", ["'gpt'"]),
        ({"system_prompt": {"type": "custom"}}, "system_prompt", ["preset"]),
        ({"system_prompt": 42}, "system_prompt", ["int"]),
        (
            {"system_prompt": {"type": "preset", "preset": "peri", "append": 3}},
            "system_prompt",
            ["append"],
        ),
        (
            {"system_prompt": {"type": "preset", "preset": "peri", "extra": "x"}},
            "system_prompt",
            ["'extra'"],
        ),
        (
            {
                "system_prompt": {"type": "preset", "preset": "peri", "append": "a"},
                "append_system_prompt": "b",
            },
            "system_prompt",
            ["append_system_prompt"],
        ),
        ({"agents": {"reviewer": {"prompt": "x"}}}, "agents", ["AgentDefinition"]),
        ({"agents": ["reviewer"]}, "agents", ["dict"]),
        ({"agents": {"bad name!": AgentDefinition("d", "p")}}, "agents", ["'bad name!'"]),
        ({"agents": {"r": AgentDefinition("", "p")}}, "agents", ["description"]),
        ({"agents": {"r": AgentDefinition("d", "p", tools="Read")}}, "agents", ["tools"]),
        ({"agents": {"r": AgentDefinition("d", "p", model=3)}}, "agents", ["model"]),  # type: ignore[arg-type]
    ],
)
def test_a_bad_shape_is_refused_naming_the_option(
    fields: dict[str, Any], option: str, words: list[str]
) -> None:
    with pytest.raises(OptionError) as caught:
        PeriOptions(**fields)
    assert caught.value.option == option
    for word in words:
        assert word in str(caught.value)


async def test_a_string_system_prompt_keeps_the_skill_listing(
    server: FakeServer, tmp_path: Path
) -> None:
    skill = tmp_path / "home" / ".claude" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Writes release notes from the git log\n---\nbody\n"
    )
    server.set_script([{"text": "ok"}])
    await _run("hi", options_for(server, tmp_path, system_prompt="You write release notes."))
    (body,) = model_calls(server)
    frozen = frozen_system(body)
    # the Skill tool names skills only through the listing, so it stays after the program's text
    assert frozen.startswith("You write release notes.\n\n")
    assert "release-notes" in frozen and "Writes release notes from the git log" in frozen
    assert "Skill" in tool_names(body)
