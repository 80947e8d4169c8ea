"""Skill: the body of one skill's SKILL.md, loaded only when the model decides it applies."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.base.tool import PydanticTool, ToolContext, ToolKind, ToolOutput, ToolTraits
from peri_cli.extensions.skills.catalog import SkillCatalog, SkillError
from peri_cli.extensions.skills.invocation import skill_message


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class SkillParams(BaseModel):
    name: str = Field(description="The skill's name, as listed under Skills.")
    args: str = Field(
        default="", description="Optional input for the skill (fills its $ARGUMENTS)."
    )


class SkillTool(PydanticTool[SkillParams]):
    """One catalog per session: the skills found when it started, bodies read on each call."""

    name = "Skill"
    kind: ToolKind = "read"
    params = SkillParams
    traits = ToolTraits("skills")

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    def description(self) -> str:
        return _description()

    def subject(self, params: SkillParams) -> str | None:
        return params.name  # `Skill(name)` rules

    async def call(self, params: SkillParams, ctx: ToolContext) -> ToolOutput:
        name = params.name.strip().removeprefix("/")
        skill = self.catalog.get(name)
        if skill is None or not skill.model_invocable:
            return ToolOutput.error(self._unknown(name, user_only=skill is not None))
        try:
            body = await asyncio.to_thread(skill.load_body)
        except SkillError as e:
            return ToolOutput.error(f"{e}. Go on without this skill, or tell the user.")
        if ctx.grant is not None and skill.allowed_tools:  # pre-approved while the skill runs
            ctx.grant(skill.allowed_tools, skill.scope == "project")
        return ToolOutput.text(skill_message(skill, body, params.args.strip()))

    def _unknown(self, name: str, *, user_only: bool) -> str:
        if user_only:
            return (
                f'Skill "{name}" can only be run by the user (as /{name}); it is not loaded '
                "by the model. Suggest the command to the user if it fits."
            )
        valid = sorted(s.name for s in self.catalog.for_model())
        if not valid:
            return f'No skills are installed, so there is no skill "{name}".'
        return f'No skill named "{name}". Available skills: {", ".join(valid)}.'
