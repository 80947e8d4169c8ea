"""Issue 40: hooks as Python callbacks (`PeriOptions(hooks={...: [HookMatcher(...)]})`), with the
inputs and answers of command hooks: deny, ask, updatedInput, additionalContext, continue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from peri_cli.sdk import (
    Allow,
    HookMatcher,
    PeriError,
    PermissionContext,
    ResultEvent,
    SystemEvent,
    ToolResultEvent,
    ToolUseEvent,
    query,
)
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for, sent_text


def bash(*commands: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "Bash", "input": {"command": c}} for c in commands]}


async def run(prompt: str, options: Any) -> list[Any]:
    return [e async for e in query(prompt, options)]


async def test_pre_tool_use_callbacks_deny_change_the_input_and_see_the_call(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([bash("rm keep.txt", "echo one > out.txt"), {"text": "done"}])
    (tmp_path / "ws").mkdir(parents=True)
    (tmp_path / "ws" / "keep.txt").write_text("keep\n")
    seen: list[tuple[dict[str, Any], str | None, dict[str, Any]]] = []

    async def guard(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> dict:
        seen.append((data, tool_use_id, ctx))
        command = data["tool_input"]["command"]
        if command.startswith("rm "):
            out = {"permissionDecision": "deny", "permissionDecisionReason": "never rm here"}
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **out}}
        changed = {"command": command.replace("one", "two")}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": changed}}

    async def never(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> dict:
        raise AssertionError("a Read matcher is not asked about Bash")

    hooks = {
        "PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard]), HookMatcher("Read", [never])]
    }
    events = await run("go", options_for(server, tmp_path, permission_mode="bypass", hooks=hooks))
    ids = [e.id for e in events if isinstance(e, ToolUseEvent)]
    assert [(d["hook_event_name"], d["tool_name"]) for d, _, _ in seen] == [
        ("PreToolUse", "Bash")
    ] * 2
    assert [t for _, t, _ in seen] == ids and seen[0][2] == {"signal": None}
    assert (tmp_path / "ws" / "keep.txt").exists()
    assert (tmp_path / "ws" / "out.txt").read_text() == "two\n"  # the changed input ran
    denied = [e for e in events if isinstance(e, ToolResultEvent) and e.is_error]
    assert len(denied) == 1 and "never rm here" in denied[0].content


async def test_ask_overrules_an_allow_rule_and_post_tool_use_adds_context(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([bash("echo hi"), {"text": "done"}])
    asked: list[str] = []

    async def ask_me(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> dict:
        return {"hookSpecificOutput": {"permissionDecision": "ask"}}

    async def note(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> dict:
        assert data["tool_response"]["output"].strip() == "hi"
        context = "the echo was checked by the program"
        return {
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": context}
        }

    async def can_use(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        asked.append(tool_input["command"])
        return Allow()

    hooks = {
        "PreToolUse": [HookMatcher("Bash", [ask_me])],
        "PostToolUse": [HookMatcher(hooks=[note])],
    }
    options = options_for(
        server, tmp_path, allowed_tools=["Bash(echo:*)"], hooks=hooks, can_use_tool=can_use
    )
    events = await run("go", options)
    assert asked == ["echo hi"]
    assert isinstance(events[-1], ResultEvent) and not events[-1].is_error
    assert "the echo was checked by the program" in sent_text(model_calls(server)[-1])


async def test_continue_false_ends_the_prompt_and_a_raising_callback_is_reported(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([bash("touch made.txt"), {"text": "never"}])

    async def broken(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> dict:
        raise RuntimeError("the program's bug")

    async def stop(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> dict:
        return {"continue_": False, "stopReason": "frozen by the program"}

    hooks = {"PreToolUse": [HookMatcher(hooks=[broken, stop])]}
    events = await run("go", options_for(server, tmp_path, permission_mode="bypass", hooks=hooks))
    result = events[-1]
    assert isinstance(result, ResultEvent) and result.error == "frozen by the program"
    assert not (tmp_path / "ws" / "made.txt").exists()
    notes = [e.to_json() for e in events if isinstance(e, SystemEvent)]
    assert any("raised RuntimeError: the program's bug" in n for n in notes), notes
    assert len(model_calls(server)) == 1


async def test_a_user_prompt_submit_callback_adds_context(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "ok"}])

    async def ticket(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> dict:
        assert data["prompt"] == "what is open?" and tool_use_id is None
        return {"hookSpecificOutput": {"additionalContext": "ticket ABC-123 is open"}}

    hooks = {"UserPromptSubmit": [HookMatcher(hooks=[ticket])]}
    await run("what is open?", options_for(server, tmp_path, hooks=hooks))
    assert "ticket ABC-123 is open" in sent_text(model_calls(server)[-1])


@pytest.mark.parametrize(
    ("hooks", "named"),
    [
        ({"SessionEnd": []}, "'SessionEnd'"),
        ({"PreToolUse": HookMatcher()}, "a list of HookMatcher"),
        ({"PreToolUse": [lambda *a: {}]}, "a HookMatcher, not function"),
        ({"PreToolUse": [HookMatcher("(", [])]}, "matcher '('"),
        ({"PreToolUse": [HookMatcher(hooks=["x"])]}, "'x' is not a callable"),
        ({"PreToolUse": [HookMatcher(timeout=0)]}, "timeout"),
    ],
)
async def test_bad_hooks_are_refused_naming_the_option(
    server: FakeServer, tmp_path: Path, hooks: Any, named: str
) -> None:
    with pytest.raises(PeriError) as caught:
        await run("go", options_for(server, tmp_path, hooks=hooks))
    assert "hooks" in str(caught.value) and named in str(caught.value)
