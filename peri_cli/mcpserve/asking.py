"""Peri's questions as MCP elicitation (form mode), for a client that offers it: a permission
question is "allow once" or "deny" (never a remembered rule); AskUserQuestion's questions are a
form; a plan's approval leaves plan mode only for a mode the server's bound allows."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from peri_cli.mcpserve.bounds import looser
from peri_cli.sdk import (
    Allow,
    Answers,
    Asking,
    Deny,
    PermissionContext,
    answered_input,
    form_answers,
)

log = logging.getLogger("peri.mcpserve")

# (message, requested schema) -> the client's answer: {"action": ..., "content": {...}}
Elicit = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
ALLOW_ONCE, DENY = "allow_once", "deny"
DECISION = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Decision",
            "oneOf": [
                {"const": ALLOW_ONCE, "title": "Allow once"},
                {"const": DENY, "title": "Deny"},
            ],
        }
    },
    "required": ["decision"],
}
INPUT_CHARS = 2000  # of a call's input shown in the question


class ClientAsker:
    """The door's `can_use_tool`, answered by the MCP client through elicitation."""

    def __init__(self, elicit: Elicit, bound: str) -> None:
        self.elicit, self.bound = elicit, bound

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: PermissionContext
    ) -> Allow | Deny:
        if context.asking is not None:
            if context.asking.plan is not None:
                return await self._plan(context.asking)
            return await self._questions(context.asking, tool_input)
        shown = json.dumps(tool_input, ensure_ascii=False)
        if len(shown) > INPUT_CHARS:
            shown = shown[:INPUT_CHARS] + " ..."
        why = f" ({context.reason})" if context.reason else ""
        who = f"Peri's SubAgent {context.agent}" if context.agent else "Peri"
        message = f"{who} asks to use {tool_name}{why}: {shown}"
        answer = await self._ask(message, DECISION)
        if answer.get("action") == "accept" and _content(answer).get("decision") == ALLOW_ONCE:
            return Allow()
        return Deny(f"the MCP client denied this {tool_name} call")

    async def _plan(self, asking: Asking) -> Allow | Deny:
        """Approve (into accept-edits, or default when the bound is stricter) or keep planning.
        (A server bound to plan asks no one: the plan is the run's result.)"""
        mode = "accept-edits" if not looser("accept-edits", self.bound) else "default"
        message = f"Approve this plan and leave plan mode (then: {mode})?\n\n{asking.plan}"
        answer = await self._ask(message, DECISION)
        if answer.get("action") == "accept" and _content(answer).get("decision") == ALLOW_ONCE:
            return Allow(updated_input={"mode": mode})
        return Deny("")

    async def _questions(self, asking: Asking, tool_input: dict[str, Any]) -> Allow | Deny:
        message = "; ".join(q.question for q in asking.questions)
        answer = await self._ask(message, form_schema(asking))
        if answer.get("action") == "accept":
            return Allow(updated_input=answered_input(tool_input, answers_of(asking, answer)))
        return Deny("")

    async def _ask(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.elicit(message, schema)
        except Exception as e:  # a client that fails to answer: nothing runs unasked
            log.warning("elicitation failed: %s", e)
            return {"action": "cancel"}


def _content(answer: dict[str, Any]) -> dict[str, Any]:
    content = answer.get("content")
    return content if isinstance(content, dict) else {}


def form_schema(asking: Asking) -> dict[str, Any]:
    """One field per question (a choice, or several) and one for an answer of the client's own."""
    properties: dict[str, Any] = {}
    for n, q in enumerate(asking.questions):
        choices = [{"const": o.label, "title": o.label} for o in q.options]
        if q.multi_select:
            properties[f"q{n}"] = {
                "type": "array",
                "title": q.header,
                "description": q.question,
                "items": {"anyOf": choices},
            }
        else:
            properties[f"q{n}"] = {
                "type": "string",
                "title": q.header,
                "description": q.question,
                "oneOf": choices,
            }
        properties[f"q{n}_other"] = {
            "type": "string",
            "title": f"{q.header}: other",
            "description": "An answer of your own (optional)",
        }
    return {"type": "object", "properties": properties}


def answers_of(asking: Asking, answer: dict[str, Any]) -> Answers:
    """The client's form as AskUserQuestion's answers."""
    return form_answers(asking, _content(answer))
