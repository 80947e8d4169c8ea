"""A question with options (AskUserQuestion, ExitPlanMode's approval) answered by a program's
`can_use_tool` (CONTRACT.md §11); without one no one can answer: a plan ends the run as its
result, a question gets an error result saying so."""

from __future__ import annotations

from peri_cli.base.events import PermissionRequested
from peri_cli.base.questions import (
    NO_ONE_TO_ASK,
    Asking,
    declined,
    keep_planning,
    plan_input,
)
from peri_cli.sdk.options import Allow, Deny

LEAVES_PLAN = ("default", "accept-edits", "bypass")
# The Claude Agent SDK's names for the same modes.
_ALIASES = {"acceptEdits": "accept-edits", "bypassPermissions": "bypass"}
UNANSWERED_PLAN = (
    "No one can approve the plan in this run (it is not interactive): the run ends here with "
    "the plan as its result, and nothing was changed."
)


def unanswered(event: PermissionRequested, asking: Asking) -> None:
    """No one to ask: a plan ends the turn (the face reports it), questions fail."""
    if asking.plan is not None:
        event.ends_turn = True
        event.deny_note = UNANSWERED_PLAN
    else:
        event.deny_note = NO_ONE_TO_ASK
    event.future.set_result("deny")


def answered(event: PermissionRequested, asking: Asking, verdict: Allow | Deny) -> None:
    """The program's verdict as the call's input (allowed) or the model's message (denied)."""
    if isinstance(verdict, Deny):
        message = verdict.message
        event.deny_note = keep_planning(message) if asking.plan is not None else declined(message)
        event.future.set_result("deny")
        return
    if asking.plan is None:
        if verdict.updated_input is not None:
            event.updated_input = dict(verdict.updated_input)
        event.future.set_result("allow")
        return
    mode = chosen_mode(verdict)
    if mode not in LEAVES_PLAN:
        event.deny_note = keep_planning(
            f"(the program's answer named the mode {mode!r}, not one of {', '.join(LEAVES_PLAN)})"
        )
        event.future.set_result("deny")
        return
    event.updated_input = plan_input(asking.plan, mode)
    event.future.set_result("allow")


def chosen_mode(verdict: Allow) -> str:
    """The mode an approval names: `updated_input["mode"]`, else a `setMode` update, else
    `default`."""
    mode = (verdict.updated_input or {}).get("mode")
    for update in verdict.updated_permissions or ():
        if mode is None and update.type == "setMode" and update.mode:
            mode = update.mode
    if not isinstance(mode, str):
        return "default"
    return _ALIASES.get(mode, mode)
