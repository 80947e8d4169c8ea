"""Issue 40, `peri mcp serve`'s questions: a permission question goes to a client with an
elicitation callback as "allow once" or "deny" (never remembered: the next call asks again),
AskUserQuestion's questions as a form; a client without elicitation gets headless rules and the
denials in the result."""

from __future__ import annotations

import json

import pytest
from mcp.client.client import ConnectMode

from tests.e2e.conftest import Peri
from tests.mcpserve.conftest import Asked, serving
from tests.mcpserve.test_mcpserve_bounds import write
from tests.mcpserve.test_mcpserve_calls import call

QUESTION = {
    "question": "Which colour?",
    "header": "Colour",
    "options": [
        {"label": "Blue", "description": "the sky"},
        {"label": "Red", "description": "a rose"},
    ],
    "multiSelect": False,
}


def tool_results(body: dict[str, object]) -> list[str]:
    out = []
    for message in body["messages"]:  # type: ignore[attr-defined]
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                out.append(content if isinstance(content, str) else json.dumps(content))
    return out


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_elicitation_allow_once_then_deny_and_nothing_is_remembered(
    peri: Peri, mode: ConnectMode
) -> None:
    one, two = peri.workspace / "one.txt", peri.workspace / "two.txt"
    peri.server.set_script([write(str(one)), write(str(two)), {"text": "done"}])
    asked = Asked(answers=[{"decision": "allow_once"}, {"decision": "deny"}])
    async with serving(peri, asked=asked, mode=mode) as client:
        result = await call(client, "peri", {"prompt": "write both"})
    assert not result.is_error, result
    assert one.read_text() == "x\n"
    assert not two.exists()
    assert len(asked.asked) == 2  # the second Write asked again: "allow once" kept no rule
    assert "Write" in asked.asked[0].message and str(one) in asked.asked[0].message
    schema = asked.asked[0].requested_schema
    options = [o["const"] for o in schema["properties"]["decision"]["oneOf"]]
    assert options == ["allow_once", "deny"]
    denials = result.structured_content["permission_denials"]
    assert [d["tool_name"] for d in denials] == ["Write"]
    assert "the MCP client denied this Write call" in tool_results(peri.server.bodies[-1])[-1]
    settings = peri.workspace / ".peri" / "settings.local.json"
    assert not settings.exists()


async def test_a_declined_elicitation_denies(peri: Peri) -> None:
    target = peri.workspace / "one.txt"
    peri.server.set_script([write(str(target)), {"text": "done"}])
    asked = Asked(answers=[None])
    async with serving(peri, asked=asked) as client:
        result = await call(client, "peri", {"prompt": "write"})
    assert not target.exists() and len(asked.asked) == 1
    assert result.structured_content["permission_denials"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_ask_user_question_goes_to_the_client_as_a_form(
    peri: Peri, mode: ConnectMode
) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
            {"text": "blue it is"},
        ]
    )
    asked = Asked(answers=[{"q0": "Blue"}])
    async with serving(peri, asked=asked, mode=mode) as client:
        result = await call(client, "peri", {"prompt": "ask me"})
    assert result.content[0].text == "blue it is", result
    (form,) = asked.asked
    assert form.message == "Which colour?"
    field = form.requested_schema["properties"]["q0"]
    assert [o["const"] for o in field["oneOf"]] == ["Blue", "Red"]
    assert "Blue" in tool_results(peri.server.bodies[-1])[-1]


async def test_without_elicitation_questions_follow_headless_rules(peri: Peri) -> None:
    target = peri.workspace / "one.txt"
    peri.server.set_script(
        [
            write(str(target)),
            {"tool_calls": [{"name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
            {"text": "went on"},
        ]
    )
    async with serving(peri) as client:
        result = await call(client, "peri", {"prompt": "go"})
    assert not target.exists()
    assert result.content[0].text.startswith("went on")
    assert "denied (Write)" in result.content[0].text
    results = tool_results(peri.server.bodies[-1])
    assert "No one can answer questions in this run" in results[-1]


def plan_then_write(peri: Peri) -> None:
    plan = {"tool_calls": [{"name": "ExitPlanMode", "input": {"plan": "1. write one.txt"}}]}
    peri.server.set_script([plan, write(str(peri.workspace / "one.txt")), {"text": "done"}])


async def test_a_plan_approved_by_the_client_leaves_plan_mode_within_the_bound(
    peri: Peri,
) -> None:
    plan_then_write(peri)
    asked = Asked(answers=[{"decision": "allow_once"}, {"decision": "allow_once"}])
    async with serving(peri, asked=asked) as client:
        result = await call(client, "peri", {"prompt": "plan it", "permission_mode": "plan"})
    assert result.content[0].text == "done", result
    plan, write_call = asked.asked
    assert "Approve this plan" in plan.message and "(then: default)" in plan.message
    assert "1. write one.txt" in plan.message
    assert "Write" in write_call.message  # default mode, the server's bound: the edit asked
    assert (peri.workspace / "one.txt").exists()


async def test_a_server_bound_to_plan_returns_the_plan_and_asks_no_one(peri: Peri) -> None:
    plan_then_write(peri)
    asked = Asked(answers=[{"decision": "allow_once"}])
    async with serving(peri, "--permission-mode", "plan", asked=asked) as client:
        result = await call(client, "peri", {"prompt": "plan it"})
    assert asked.asked == []
    assert "1. write one.txt" in result.content[0].text, result
    assert not (peri.workspace / "one.txt").exists()
