"""StructuredOutput: its input schema is the one asked for; each call's verdict is kept."""

from __future__ import annotations

import dataclasses

from peri_cli.agent.structured import StructuredCapture
from peri_cli.base.tool import ToolContext, ToolOutput
from peri_cli.mcp.schema import compile_check
from peri_cli.tools.structured_output import StructuredOutputTool

SCHEMA = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["tags"],
}


def text(out: ToolOutput) -> str:
    return "".join(getattr(part, "text", "") for part in out.content)


def tool() -> StructuredOutputTool:
    check, _ = compile_check(SCHEMA, root="(root)")
    return StructuredOutputTool(SCHEMA, check, StructuredCapture())


def test_the_spec_is_the_schema_asked_for() -> None:
    spec = tool().spec()
    assert spec.name == "StructuredOutput" and spec.input_schema == SCHEMA
    assert "exactly once" in spec.description


async def test_a_fitting_answer_is_accepted(ctx: ToolContext) -> None:
    t = tool()
    out = await t.call(t.validate({"tags": ["a"]}), ctx)
    assert not out.is_error and "accepted" in text(out)
    assert t.capture.accepted and t.capture.value == {"tags": ["a"]}


async def test_an_answer_that_does_not_fit_is_an_error_naming_the_path(ctx: ToolContext) -> None:
    t = tool()
    out = await t.call(t.validate({"tags": ["a", 2]}), ctx)
    assert out.is_error and "tags.1: 2 is not of type 'string'" in text(out)
    assert not t.capture.accepted and t.capture.problem == "tags.1: 2 is not of type 'string'"
    missing = await t.call(t.validate({}), ctx)
    assert missing.is_error and "(root): 'tags' is a required property" in text(missing)


async def test_a_subagents_call_changes_nothing(ctx: ToolContext) -> None:
    t = tool()
    out = await t.call({"tags": []}, dataclasses.replace(ctx, agent_id="child-1"))
    assert out.is_error and t.capture.calls == 0 and not t.capture.accepted
