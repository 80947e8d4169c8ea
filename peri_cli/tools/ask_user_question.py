"""AskUserQuestion (Claude Code's input): 1-4 questions with 2-4 options each and a free answer.
The loop asks them through the asking port; the answers come back in the input (`answers`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from peri_cli.base.provider import ToolSpec
from peri_cli.base.questions import Asking, questions_asking
from peri_cli.base.tool import PydanticTool, ToolContext, ToolKind, ToolOutput, ToolTraits


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class QuestionOption(BaseModel):
    model_config = ConfigDict(extra="ignore")
    label: str = Field(min_length=1, max_length=80, description="The choice, in 1-5 words.")
    description: str = Field(default="", max_length=500, description="What choosing it means.")


class AskedQuestion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    question: str = Field(min_length=1, max_length=1000, description="The whole question.")
    header: str = Field(min_length=1, max_length=40, description="A short tag (max 12 chars).")
    options: list[QuestionOption] = Field(min_length=2, max_length=4)
    multiSelect: bool = Field(default=False, description="Allow more than one option.")

    @model_validator(mode="after")
    def _distinct_labels(self) -> AskedQuestion:
        labels = [o.label for o in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError(f"the options of {self.question!r} repeat a label")
        return self


class AskUserQuestionParams(BaseModel):
    model_config = ConfigDict(extra="ignore")
    questions: list[AskedQuestion] = Field(min_length=1, max_length=4)
    # Set by the answer, never by the model: question -> label, labels, or the user's own text.
    answers: dict[str, str | list[str]] | None = None

    @model_validator(mode="after")
    def _distinct_questions(self) -> AskUserQuestionParams:
        texts = [q.question for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("two questions have the same text; each must be distinct")
        return self


class AskUserQuestionTool(PydanticTool[AskUserQuestionParams]):
    name = "AskUserQuestion"
    kind: ToolKind = "read"  # it changes nothing; plan mode lets it run
    params = AskUserQuestionParams

    traits = ToolTraits()

    def description(self) -> str:
        return _description()

    def spec(self) -> ToolSpec:
        """The model sees `questions` only (the answers are the person's)."""
        spec = super().spec()
        schema: dict[str, Any] = dict(spec.input_schema)
        schema["properties"] = {"questions": schema["properties"]["questions"]}
        return ToolSpec(name=spec.name, description=spec.description, input_schema=schema)

    def asking(self, params: AskUserQuestionParams) -> Asking:
        return questions_asking([q.model_dump() for q in params.questions])

    async def call(self, params: AskUserQuestionParams, ctx: ToolContext) -> ToolOutput:
        if params.answers is None:
            return ToolOutput.error("No answers came back; ask again or go on without them.")
        said = []
        for q in params.questions:
            answer = params.answers.get(q.question)
            shown = ", ".join(answer) if isinstance(answer, list) else answer
            said.append(f'"{q.question}"="{shown if shown else "(no answer)"}"')
        return ToolOutput.text(
            f"User has answered your questions: {', '.join(said)}. You can now continue with "
            "the user's answers in mind."
        )
