"""The one "question with options" every face asks (CONTRACT.md §11): `AskUserQuestion`'s
questions and `ExitPlanMode`'s approval ride the asking port (`PermissionRequested.asking`) as an
`Asking`, built here once, and come back as the call's changed input (`answered_input`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from peri_cli.base.modes import Mode

PLAN_TOOL = "ExitPlanMode"
QUESTION_TOOL = "AskUserQuestion"
APPROVE_EDITS = "Approve and accept edits"
APPROVE_ASK = "Approve and ask for each edit"
KEEP_PLANNING = "Keep planning"
# What each answer to a plan switches the mode to (keep planning: none).
PLAN_MODES: dict[str, Mode] = {APPROVE_EDITS: "accept-edits", APPROVE_ASK: "default"}
PLAN_QUESTION = "Approve this plan and leave plan mode?"
# A SubAgent's question would reach the user without its context (and a plan's approval would
# switch the session's mode under the parent): it reports what needs the user instead.
NOT_FROM_SUBAGENTS = (
    "A SubAgent cannot ask the user or leave plan mode. Do what you can without the answer, and "
    "say in your final report what the user needs to decide."
)
NO_ONE_TO_ASK = (
    "No one can answer questions in this run (it is not interactive). Do not ask again: "
    "make a reasonable choice, say which one you made and why, and go on."
)
# What a face puts under "answers" when the person typed their own answer ("other").
Answers = dict[str, str | list[str]]


@dataclass(frozen=True)
class Option:
    label: str
    description: str = ""


@dataclass(frozen=True)
class Question:
    question: str
    header: str
    options: tuple[Option, ...]
    multi_select: bool = False


@dataclass(frozen=True)
class Asking:
    """What to ask: questions, each with 2-4 options and a free answer; for a plan, the plan
    (Markdown, the model's text) shown above its one question, whose free answer is a note."""

    questions: tuple[Question, ...]
    plan: str | None = None

    @property
    def tool(self) -> str:
        return PLAN_TOOL if self.plan is not None else QUESTION_TOOL


def plan_asking(plan: str) -> Asking:
    options = (
        Option(APPROVE_EDITS, "leave plan mode; file edits in the workspace run without asking"),
        Option(APPROVE_ASK, "leave plan mode; each edit asks first"),
        Option(KEEP_PLANNING, "stay in plan mode; say what to change"),
    )
    return Asking((Question(PLAN_QUESTION, "Plan", options),), plan=plan)


def questions_asking(raw_questions: list[dict[str, Any]]) -> Asking:
    """The questions of a validated `AskUserQuestion` input."""
    return Asking(
        tuple(
            Question(
                str(q["question"]),
                str(q["header"]),
                tuple(Option(str(o["label"]), str(o.get("description", ""))) for o in q["options"]),
                bool(q.get("multiSelect", False)),
            )
            for q in raw_questions
        )
    )


def plan_input(plan: str, mode: str) -> dict[str, Any]:
    """ExitPlanMode's input once approved: the mode it switches to."""
    return {"plan": plan, "mode": mode}


def form_answers(asking: Asking, content: dict[str, Any]) -> Answers:
    """An editor's or an MCP client's form values (`q<N>` the choice, `q<N>_other` an answer
    of the person's own) as AskUserQuestion's answers: an own answer wins over the choice."""
    answers: Answers = {}
    for n, q in enumerate(asking.questions):
        own, chosen = content.get(f"q{n}_other"), content.get(f"q{n}")
        if isinstance(own, str) and own.strip():
            answers[q.question] = own.strip()
        elif isinstance(chosen, str) and chosen:
            answers[q.question] = chosen
        elif isinstance(chosen, list) and chosen:
            answers[q.question] = [str(c) for c in chosen]
    return answers


def answered_input(tool_input: dict[str, Any], answers: Answers) -> dict[str, Any]:
    """AskUserQuestion's input once answered (the SDK's `Allow(updated_input=...)` shape)."""
    return {**tool_input, "answers": answers}


def keep_planning(note: str) -> str:
    """What the model reads when the plan is not approved."""
    said = f" They said: {note.strip()}" if note.strip() else ""
    return (
        f"The user did not approve the plan and wants you to keep planning.{said}\n"
        "Stay in plan mode: revise the plan, then present it again with ExitPlanMode."
    )


def declined(note: str = "") -> str:
    """What the model reads when the person dismissed its questions."""
    said = f" They said: {note.strip()}" if note.strip() else ""
    return f"The user declined to answer your questions.{said} Do not ask the same again."


@runtime_checkable
class AsksUser(Protocol):
    """A tool whose call is a question to the person (the loop asks it whatever the mode or
    the allow rules say; a deny rule still refuses it)."""

    def asking(self, params: Any) -> Asking | None:
        """What to ask for this call; None: nothing to ask (the call runs and says why)."""
        ...
