"""Peri's permission questions as `session/request_permission` (CONTRACT.md §9): the options
the TUI offers, the tool call shown with its whole diff or command."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acp import Client
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from peri_cli.acp.questions import ask_plan, ask_questions
from peri_cli.acp.tools import KindOf, asked_content, other_kind, plain, title_of
from peri_cli.acp.updates import Updates
from peri_cli.sdk import Allow, Asking, Deny, PermissionContext, keeps_label

NETWORK_TOOL = "Network"  # (CONTRACT.md §8: a sandbox's question about a domain)

log = logging.getLogger("peri.acp")

VERDICTS: dict[str, Allow | Deny] = {
    "allow_once": Allow(),
    "allow_session": Allow(remember="session"),
    "allow_project": Allow(remember="project"),
    "reject_once": Deny(),
    "reject_always": Deny(remember="project"),
}


def network_options(domain: str) -> list[PermissionOption]:
    """A sandboxed command reaching a new domain: once (for the session), always (what the
    TUI's default "always" does: `sandbox.network.allowedDomains` in the local settings), reject."""
    shown = plain(domain, 80)
    return [
        PermissionOption(
            option_id="allow_once", name=f"Allow {shown} for this session", kind="allow_once"
        ),
        PermissionOption(
            option_id="allow_project",
            name=f"Always allow {shown} in this project (.peri/settings.local.json)",
            kind="allow_always",
        ),
        PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    ]


def options_for(
    context: PermissionContext, tool_name: str = "", tool_input: dict[str, Any] | None = None
) -> list[PermissionOption]:
    """Allow once, for this session, always in this project; reject once, always. The kept
    ones only when a rule fits the call (a write outside the workspace has none), each naming
    every rule it keeps (a compound command's parts), none cut."""
    domain = (tool_input or {}).get("domain")
    if tool_name == NETWORK_TOOL and isinstance(domain, str):
        return network_options(domain)
    kept = context.suggestions or ((context.suggested_rule,) if context.suggested_rule else ())
    options = [PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")]
    if kept:  # each label names every rule it keeps, whole (CONTRACT.md §8)
        options += [
            PermissionOption(
                option_id="allow_session",
                name=keeps_label("session", kept),
                kind="allow_always",
            ),
            PermissionOption(
                option_id="allow_project",
                name=keeps_label("project", kept),
                kind="allow_always",
            ),
        ]
    options.append(PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"))
    if kept:
        options.append(
            PermissionOption(
                option_id="reject_always",
                name=keeps_label("reject", kept),
                kind="reject_always",
            )
        )
    return options


class EditorAsker:
    """The door's `can_use_tool`, answered by the person in the editor."""

    def __init__(self, conn: Client, cwd: Path, *, forms: bool = False) -> None:
        self.conn, self.cwd, self.forms = conn, cwd, forms
        self.kind_of: KindOf = other_kind  # the session's tools' own, once it is connected
        self.on_mode: Callable[[str], Awaitable[None]] | None = None  # a plan approved
        self.updates: Updates | None = None  # the session's: the call is shown before asking

    async def _ask(
        self, asking: Asking, tool_input: dict[str, Any], context: PermissionContext
    ) -> Allow | Deny:
        """A question with options (a plan, AskUserQuestion's questions)."""
        if asking.plan is None:
            return await ask_questions(self.conn, asking, tool_input, context, forms=self.forms)
        verdict = await ask_plan(self.conn, asking, context)
        mode = (verdict.updated_input or {}).get("mode") if isinstance(verdict, Allow) else None
        if isinstance(mode, str) and self.on_mode is not None:
            await self.on_mode(mode)
        return verdict

    async def _show_call(
        self, tool_name: str, tool_input: dict[str, Any], context: PermissionContext
    ) -> None:
        """The main agent's call as a `tool_call` first (a SubAgent's calls are shown as its
        Agent call's progress; a Network question belongs to no call)."""
        if self.updates is None or context.agent is not None or not context.tool_use_id:
            return
        if tool_name == NETWORK_TOOL:
            return
        for update in self.updates.asked(context.tool_use_id, tool_name, tool_input):
            try:
                await self.conn.session_update(session_id=context.session_id, update=update)
            except Exception as e:  # the editor went away: the question fails next
                log.info("tool_call not sent: %s", e)

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: PermissionContext
    ) -> Allow | Deny:
        await self._show_call(tool_name, tool_input, context)
        if context.asking is not None:
            return await self._ask(context.asking, tool_input, context)
        title = title_of(tool_name, tool_input, self.cwd)
        if context.reason:
            title = plain(f"{title} ({context.reason})")
        call = ToolCallUpdate(
            # (a Network question belongs to no call of its own: it gets an id that says so)
            tool_call_id=context.tool_use_id or f"network-{uuid.uuid4().hex[:12]}",
            title=title,
            kind=self.kind_of(tool_name),
            status="pending",
            content=asked_content(tool_name, tool_input, self.cwd) or None,
            raw_input=tool_input,
        )
        try:
            answer = await self.conn.request_permission(
                session_id=context.session_id,
                tool_call=call,
                options=options_for(context, tool_name, tool_input),
            )
        except Exception as e:  # the editor failed to answer: nothing runs unasked
            log.warning("request_permission failed: %s", e)
            return Deny(f"the editor did not answer the permission question: {e}")
        outcome = answer.outcome
        if isinstance(outcome, AllowedOutcome):
            return VERDICTS.get(outcome.option_id, Deny("the editor chose an unknown option"))
        return Deny("the person cancelled the question")
