"""The session's own commands: /clear and /compact make room in its context, /resume and /fork
move to another session."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from peri_cli.tui.commands.registry import command
from peri_cli.tui.context import estimate_request
from peri_cli.tui.widgets.separator import Separator

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort


@command("clear")
async def clear(app: AppPort, _arg: str) -> None:
    before = app.status.status.context_tokens
    app.agent.session.clear()
    after = await asyncio.to_thread(estimate_request, app.agent, app.estimator)
    await app.conversation.clear_screen(Separator("clear", before, after))
    app.todo_strip.show(None)  # an empty visible history has no task list
    app.status.set(context_tokens=after, context_estimated=True, cache_share=None)
    if (note := await asyncio.to_thread(app.runtime.style_note)) is not None:
        await app.notice(note)  # the frozen prompt stays: a style chosen since waits
    await app.session_start("clear")


@command("compact")
async def compact(app: AppPort, arg: str) -> None:
    if not app.agent.view():
        await app.notice("Nothing to compact: the history the model sees is empty.")
        return
    compactor = app.agent.compactor
    if compactor is None:
        await app.notice(
            "Compaction is not available in this build yet: nothing was changed. "
            "/clear empties the visible history instead.",
            "warning",
        )
        return
    await app.run_events(app.agent.compact_now(arg or None), "compacting")


@command("resume")
async def resume(app: AppPort, _arg: str) -> None:
    await app.open_picker()


@command("fork")
async def fork(app: AppPort, _arg: str) -> None:
    old = app.agent.session.id
    if await app.switch_session(old, fork=True, rerender=False):
        await app.notice(
            f"Forked: you are now in session {app.agent.session.id[:8]}, a copy of "
            f"{old[:8]}; the original is left as it was."
        )
