"""The question with options (CONTRACT.md §11) asked in the editor: a plan through
`session/request_permission` with the plan as content; questions through `elicitation/create` in
form mode when the client advertises it, else one single-select question as a permission
question, else an error result for the model."""

from __future__ import annotations

import logging
from typing import Any

from acp import Client
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ElicitationFormSessionMode,
    ElicitationMultiSelectPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    PermissionOption,
    TitledMultiSelectItems,
    ToolCallUpdate,
)

from peri_cli.acp.tools import plain, text_content
from peri_cli.sdk import (
    KEEP_PLANNING,
    PLAN_MODES,
    Allow,
    Asking,
    Deny,
    PermissionContext,
    Question,
    answered_input,
    form_answers,
)

log = logging.getLogger("peri.acp")
# Option ids for the plan's approvals, in PLAN_MODES' order (accept edits, ask for each edit).
PLAN_OPTIONS = dict(zip(("plan_accept_edits", "plan_default"), PLAN_MODES, strict=True))
CANNOT_SHOW = (
    "The editor cannot show these questions (it offers no forms): ask one single-choice "
    "question at a time, or decide yourself and say what you chose."
)


async def ask_plan(conn: Client, asking: Asking, context: PermissionContext) -> Allow | Deny:
    """Approve and accept edits, approve and ask for each edit, keep planning."""
    options = [
        PermissionOption(option_id=i, name=name, kind="allow_once")
        for i, name in PLAN_OPTIONS.items()
    ]
    options.append(PermissionOption(option_id="plan_keep", name=KEEP_PLANNING, kind="reject_once"))
    call = ToolCallUpdate(
        tool_call_id=context.tool_use_id,
        title="Approve this plan and leave plan mode?",
        kind="switch_mode",
        status="pending",
        content=[text_content(asking.plan or "")],
        raw_input={"plan": asking.plan},
    )
    outcome = await _permission(conn, context, call, options)
    if isinstance(outcome, AllowedOutcome) and outcome.option_id in PLAN_OPTIONS:
        return Allow(updated_input={"mode": PLAN_MODES[PLAN_OPTIONS[outcome.option_id]]})
    return Deny("")  # (keep planning: the standard message; an editor offers no note)


async def ask_questions(
    conn: Client,
    asking: Asking,
    tool_input: dict[str, Any],
    context: PermissionContext,
    *,
    forms: bool,
) -> Allow | Deny:
    if forms:
        return await _elicit(conn, asking, tool_input, context)
    only = asking.questions[0]
    if len(asking.questions) > 1 or only.multi_select:
        return Deny(CANNOT_SHOW)
    options = [
        PermissionOption(option_id=f"answer_{n}", name=plain(o.label, 80), kind="allow_once")
        for n, o in enumerate(only.options)
    ]
    options.append(PermissionOption(option_id="dismiss", name="Dismiss", kind="reject_once"))
    call = ToolCallUpdate(
        tool_call_id=context.tool_use_id,
        title=plain(only.question),
        kind="other",
        status="pending",
        content=[text_content(_described(only))],
        raw_input=tool_input,
    )
    outcome = await _permission(conn, context, call, options)
    if isinstance(outcome, AllowedOutcome) and outcome.option_id.startswith("answer_"):
        label = only.options[int(outcome.option_id.removeprefix("answer_"))].label
        return Allow(updated_input=answered_input(tool_input, {only.question: label}))
    return Deny("")


def _described(question: Question) -> str:
    lines = [question.question]
    lines += [
        f"- {o.label}: {o.description}" if o.description else f"- {o.label}"
        for o in question.options
    ]
    return "\n".join(lines)


async def _permission(
    conn: Client, context: PermissionContext, call: ToolCallUpdate, options: list[PermissionOption]
) -> object:
    try:
        answer = await conn.request_permission(
            session_id=context.session_id, tool_call=call, options=options
        )
    except Exception as e:  # the editor failed to answer: the model is told it was not approved
        log.warning("request_permission failed: %s", e)
        return None
    return answer.outcome


def form_schema(asking: Asking) -> ElicitationSchema:
    """One field per question (a choice, or several), and one for an answer of the user's own."""
    properties: dict[str, Any] = {}
    for n, q in enumerate(asking.questions):
        choices = [
            EnumOption(const=o.label, title=o.label, description=o.description or None)
            for o in q.options
        ]
        if q.multi_select:
            properties[f"q{n}"] = ElicitationMultiSelectPropertySchema(
                type="array",
                title=q.header,
                description=q.question,
                items=TitledMultiSelectItems(any_of=choices),
            )
        else:
            properties[f"q{n}"] = ElicitationStringPropertySchema(
                type="string", title=q.header, description=q.question, one_of=choices
            )
        properties[f"q{n}_other"] = ElicitationStringPropertySchema(
            type="string",
            title=f"{q.header}: other",
            description="An answer of your own (optional)",
        )
    return ElicitationSchema(properties=properties)


async def _elicit(
    conn: Client, asking: Asking, tool_input: dict[str, Any], context: PermissionContext
) -> Allow | Deny:
    mode = ElicitationFormSessionMode(
        session_id=context.session_id,
        tool_call_id=context.tool_use_id or None,
        requested_schema=form_schema(asking),
    )
    message = plain("; ".join(q.question for q in asking.questions), 500)
    try:
        answer = await conn.create_elicitation(message=message, mode=mode)
    except Exception as e:
        log.warning("elicitation/create failed: %s", e)
        return Deny(f"the editor did not answer the questions: {e}")
    if isinstance(answer, AcceptElicitationResponse):
        return Allow(
            updated_input=answered_input(tool_input, form_answers(asking, answer.content or {}))
        )
    return Deny("")
