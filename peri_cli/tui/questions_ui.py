"""A question with options from the loop (AskUserQuestion, ExitPlanMode) opens the picker; what
the person picks becomes the call's input, a dismissal the model's message."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peri_cli.base.events import PermissionRequested
    from peri_cli.base.questions import Asking
    from peri_cli.tui.ports import AppPort
    from peri_cli.tui.screens.question_picker import Picked


def settle(event: PermissionRequested, asking: Asking, picked: Picked | None) -> str | None:
    """Answer the event from the picker's result; returns the mode an approved plan switches to."""
    from peri_cli.base.questions import (
        PLAN_MODES,
        answered_input,
        declined,
        keep_planning,
        plan_input,
    )

    if asking.plan is not None:
        chosen = picked.answers.get(asking.questions[0].question) if picked else None
        mode = PLAN_MODES.get(chosen) if isinstance(chosen, str) else None
        if mode is None:
            event.deny_note = keep_planning(picked.note if picked else "")
            event.future.set_result("deny")
            return None
        event.updated_input = plan_input(asking.plan, mode)
        event.future.set_result("allow")
        return mode
    if picked is None:
        event.deny_note = declined()
        event.future.set_result("deny")
        return None
    event.updated_input = answered_input(event.input, picked.answers)
    event.future.set_result("allow")
    return None


async def ask_question(app: AppPort, event: PermissionRequested) -> None:
    """Open the picker; its answer settles the event (a stopped turn closes it)."""
    from peri_cli.tui.screens.question_picker import QuestionPicker

    asking = event.asking
    assert asking is not None
    picker = QuestionPicker(asking)

    def done(picked: Picked | None) -> None:
        if event.future.done():
            return
        mode = settle(event, asking, picked)
        if mode is not None:
            app.status.set(mode=mode)  # (the call switches it as it runs, right after)

    def stopped(_future: object) -> None:
        if picker.is_attached and app.screen is picker:
            picker.dismiss(None)

    event.future.add_done_callback(stopped)
    await app.push_screen(picker, callback=done)
    app.notify_user("Peri has a question for you", "elicitation_dialog")
