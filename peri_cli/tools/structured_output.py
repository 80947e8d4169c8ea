"""StructuredOutput: the model's final answer as a JSON value, as Claude Code delivers it. A run
that asks for structured output (`PeriOptions.output_format`, `peri -p --json-schema`) adds this
tool for that prompt only; its input schema is the one asked for, and each call's check lands in
the prompt's `StructuredCapture` (`agent/structured.py` decides what follows)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from peri_cli.agent.structured import ACCEPTED, STRUCTURED_TOOL, StructuredCapture
from peri_cli.base.provider import ToolSpec
from peri_cli.base.tool import (
    NO_READS,
    NOTHING,
    Reads,
    ToolContext,
    ToolKind,
    ToolOutput,
    ToolTraits,
    Writes,
)

# A value's problems against the schema in one line, or None when it fits.
Check = Callable[[Any], str | None]


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class StructuredOutputTool:
    name = STRUCTURED_TOOL
    kind: ToolKind = "read"  # changes nothing and runs nothing: no mode or rule asks about it
    traits = ToolTraits(read_only=True, editor_kind="other")

    def __init__(self, schema: dict[str, Any], check: Check, capture: StructuredCapture) -> None:
        self.schema, self.check, self.capture = schema, check, capture

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=_description(), input_schema=self.schema)

    def validate(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Any object: the schema is checked when the call runs, so that its verdict is kept."""
        return dict(raw)

    def reads(self, params: dict[str, Any], ctx: ToolContext) -> Reads:
        return NO_READS

    def writes(self, params: dict[str, Any], ctx: ToolContext) -> Writes:
        return NOTHING

    def subject(self, params: dict[str, Any]) -> str | None:
        return None

    async def call(self, params: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if ctx.agent_id is not None:  # a SubAgent never has it; a forged call changes nothing
            return ToolOutput.error(f"{self.name} is for the main agent's final answer only.")
        problem = self.check(params)
        if problem is not None:
            self.capture.refuse(problem)
            return ToolOutput.error(
                f"Invalid input for {self.name}: {problem}. Fix the answer and call "
                f"{self.name} again."
            )
        self.capture.accept(params)
        return ToolOutput.text(ACCEPTED)
