"""ExitPlanMode: the model presents its plan (Markdown) and asks to leave plan mode. The answer
comes through the asking port (`base/questions.plan_asking`); approval names the mode this call
switches to, so the model goes on in the same turn."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from peri_cli.base.questions import Asking, plan_asking
from peri_cli.base.tool import (
    PydanticTool,
    ToolContext,
    ToolError,
    ToolKind,
    ToolOutput,
    ToolTraits,
)

MAX_PLAN_CHARS = 100_000
_SWITCHED = {
    "default": "each edit and command asks first",
    "accept-edits": "file edits in the workspace run without asking; commands still ask",
    "bypass": "everything runs without asking",
}


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class ExitPlanModeParams(BaseModel):
    plan: str = Field(
        min_length=1, max_length=MAX_PLAN_CHARS, description="The whole plan, in Markdown."
    )


class ApprovedPlan(ExitPlanModeParams):
    """The input once answered: the mode the approval switches to (never the model's)."""

    mode: Literal["default", "accept-edits", "bypass"] | None = None


class ExitPlanModeTool(PydanticTool[ExitPlanModeParams]):
    name = "ExitPlanMode"
    kind: ToolKind = "read"  # it changes nothing itself; plan mode lets it run
    params = ExitPlanModeParams
    traits = ToolTraits(capability="questions", card_arg="plan", editor_kind="switch_mode")

    def __init__(self, mode: Callable[[], str], set_mode: Callable[[str], None]) -> None:
        self._mode, self._set_mode = mode, set_mode

    def description(self) -> str:
        return _description()

    def validate(self, raw: dict[str, Any]) -> ApprovedPlan:
        plan = super().validate(raw)  # the model's part, with its clear errors
        try:
            return ApprovedPlan(plan=plan.plan, mode=raw.get("mode"))
        except ValidationError as e:
            raise ToolError(f"The answer named an unknown mode: {raw.get('mode')!r}") from e

    def asking(self, params: ExitPlanModeParams) -> Asking | None:
        return plan_asking(params.plan) if self._mode() == "plan" else None

    async def call(self, params: ExitPlanModeParams, ctx: ToolContext) -> ToolOutput:
        current = self._mode()
        if current != "plan":
            return ToolOutput.error(
                f"Not in plan mode (the permission mode is {current!r}): there is nothing to "
                "exit. Go on with the task."
            )
        mode = (params.mode if isinstance(params, ApprovedPlan) else None) or "default"
        self._set_mode(mode)
        return ToolOutput.text(
            f"The user approved your plan. The permission mode is now {mode!r}: "
            f"{_SWITCHED[mode]}. Carry out the plan now, step by step."
        )
