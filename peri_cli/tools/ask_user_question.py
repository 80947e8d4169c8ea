"""AskUserQuestion (Claude Code's input): 1-4 questions with 2-4 options each and a free answer.
The loop asks them through the asking port; the answers come back in the input (`answers`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from peri_cli.base.questions import Asking, questions_asking
from peri_cli.base.tool import (
    PydanticTool,
    ToolContext,
    ToolError,
    ToolKind,
    ToolOutput,
    ToolTraits,
)


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
    questions: list[AskedQuestion] = Field(
        min_length=1, max_length=4, description="1-4 questions, each with 2-4 options."
    )

    @model_validator(mode="after")
    def _distinct_questions(self) -> AskUserQuestionParams:
        texts = [q.question for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("two questions have the same text; each must be distinct")
        return self


class AnsweredQuestions(AskUserQuestionParams):
    """The input once answered (never the model's): question -> label, labels, or own text."""

    answers: dict[str, str | list[str]] | None = None


class AskUserQuestionTool(PydanticTool[AskUserQuestionParams]):
    name = "AskUserQuestion"
    kind: ToolKind = "read"  # it changes nothing; plan mode lets it run
    params = AskUserQuestionParams

    traits = ToolTraits(capability="questions")

    def description(self) -> str:
        return _description()

    def validate(self, raw: dict[str, Any]) -> AnsweredQuestions:
        asked = super().validate(raw)  # the model's part, with its clear errors
        try:
            return AnsweredQuestions(questions=asked.questions, answers=raw.get("answers"))
        except ValidationError as e:
            raise ToolError(
                "The answers are not question -> label, labels or text; ask again."
            ) from e

    def asking(self, params: AskUserQuestionParams) -> Asking:
        return questions_asking([q.model_dump() for q in params.questions])

    async def call(self, params: AskUserQuestionParams, ctx: ToolContext) -> ToolOutput:
        answers = params.answers if isinstance(params, AnsweredQuestions) else None
        if answers is None:
            return ToolOutput.error("No answers came back; ask again or go on without them.")
        said = []
        for q in params.questions:
            answer = answers.get(q.question)
            shown = ", ".join(answer) if isinstance(answer, list) else answer
            said.append(f'"{q.question}"="{shown if shown else "(no answer)"}"')
        return ToolOutput.text(
            f"User has answered your questions: {', '.join(said)}. You can now continue with "
            "the user's answers in mind."
        )
