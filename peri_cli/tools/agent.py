"""Agent: run a SubAgent on a task and return its report (or start it in the background)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from peri_cli.base.tool import (
    PydanticTool,
    ToolContext,
    ToolError,
    ToolKind,
    ToolOutput,
    ToolTraits,
)
from peri_cli.extensions.agent_types import AgentCatalog, AgentType


@functools.cache
def _template() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class SubagentRunner(Protocol):
    """What runs SubAgents for a session (agent/subagents.SubagentManager)."""

    async def run_foreground(
        self, kind: AgentType, prompt: str, description: str, tool_use_id: str
    ) -> ToolOutput: ...

    def start_background(
        self, kind: AgentType, prompt: str, description: str, tool_use_id: str
    ) -> str: ...


class AgentParams(BaseModel):
    prompt: str = Field(min_length=1, description="The whole task for the SubAgent.")
    description: str = Field(default="", description="A short label (3-5 words) for the user.")
    subagent_type: str | None = Field(
        default=None, description="The kind of SubAgent; `general` when omitted."
    )
    run_in_background: bool = Field(
        default=False, description="Return at once; the report arrives later as a message."
    )


class AgentTool(PydanticTool[AgentParams]):
    name = "Agent"
    # The call itself changes nothing: each tool the SubAgent runs asks for itself.
    kind: ToolKind = "read"
    params = AgentParams
    traits = ToolTraits("subagents", editor_kind="think")

    def __init__(self, catalog: AgentCatalog, runner: SubagentRunner | None = None) -> None:
        self.catalog = catalog
        self.runner = runner  # bound once the session's agent exists

    def description(self) -> str:
        types = "\n".join(
            f"  - `{t.name}`: {t.description}"
            for t in sorted(self.catalog.types.values(), key=lambda t: t.name)
        )
        return _template().replace("{types}", types)

    def subject(self, params: AgentParams) -> str | None:
        return params.subagent_type  # `Agent(explore)` rules

    async def call(self, params: AgentParams, ctx: ToolContext) -> ToolOutput:
        if ctx.agent_id is not None:
            raise ToolError(
                "SubAgents cannot start SubAgents. Do this part yourself, or say in your final "
                "report that it needs its own SubAgent."
            )
        if self.runner is None:
            raise ToolError("SubAgents are not available in this session.")
        kind = self.catalog.get(params.subagent_type)
        if kind is None:
            raise ToolError(
                f"Unknown subagent_type {params.subagent_type!r}. Valid types: "
                f"{', '.join(self.catalog.names())}."
            )
        args = (kind, params.prompt, params.description, ctx.call_id)
        if params.run_in_background:
            return ToolOutput.text(self.runner.start_background(*args))
        return await self.runner.run_foreground(*args)
