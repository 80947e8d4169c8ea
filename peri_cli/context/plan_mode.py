"""Plan mode as the model sees it: a request-time contribution while the mode is `plan` (the
frozen part never changes with the mode), and the approved plan, read back from the transcript."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from peri_cli.base.messages import ToolResultPart, ToolUsePart
from peri_cli.base.questions import PLAN_TOOL
from peri_cli.context.contributions import Contributor, RequestContext
from peri_cli.session.transcript import MessageEntry

PLAN_MODE_TEXT = (
    "Plan mode is on. The user wants a plan before any change: explore and read as much as "
    "you need, but do not edit, write or delete files, run commands that change anything, or "
    "make any other change (such calls are refused). When the plan is ready, call "
    f"{PLAN_TOOL} with the whole plan in Markdown; the user approves it (and the mode changes) "
    "or asks you to keep planning. Ask with AskUserQuestion when a choice is the user's to make."
)


def plan_mode_note(mode_of: Callable[[], str]) -> Contributor:
    """The contributor: the plan-mode text while `mode_of()` says `plan`, nothing otherwise."""

    def contribute(_ctx: RequestContext) -> str | None:
        return PLAN_MODE_TEXT if mode_of() == "plan" else None

    return contribute


PLAN_KEY = "plan"  # on a working-state entry: the approved plan it carried past a compaction


def approved_plan(entries: Iterable[object]) -> str | None:
    """The plan of the latest `ExitPlanMode` call the user approved (None: none was): the call
    as the model made it, whose result is not an error, or the plan a working state carried."""
    plans: dict[str, str] = {}
    approved: str | None = None
    for entry in entries:
        if not isinstance(entry, MessageEntry):
            continue
        carried = (entry.model_extra or {}).get(PLAN_KEY)
        if isinstance(carried, str):
            approved = carried
        for part in entry.message.content:
            if isinstance(part, ToolUsePart) and part.name == PLAN_TOOL:
                plan = part.input.get("plan")
                if isinstance(plan, str):
                    plans[part.id] = plan
            elif isinstance(part, ToolResultPart) and not part.is_error:
                approved = plans.get(part.tool_use_id, approved)
    return approved
