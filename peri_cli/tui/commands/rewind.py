"""/rewind: back to before one of your prompts, in the conversation, the code or both; files
changed outside Peri since are overwritten only when the user says so."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from peri_cli.base.textsafe import visible
from peri_cli.tui.commands.registry import command

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort
    from peri_cli.tui.screens.rewind_picker import RewindChoice


@command("rewind")
async def rewind(app: AppPort, _arg: str) -> None:
    """Pick a prompt, then what to restore; Enter applies at once."""
    from peri_cli.session.rewind import changed_counts, prompts, record
    from peri_cli.tui.screens.rewind_picker import RewindPicker

    session = app.agent.session
    entries = await asyncio.to_thread(record, session)
    listed = prompts(entries)
    if not listed:
        await app.notice("Nothing to rewind: no prompt of yours in this session yet.")
        return

    changed = changed_counts(entries, [p.id for p in listed])
    await app.push_screen(RewindPicker(listed, changed), callback=partial(_rewind_chosen, app))


async def _rewind_chosen(app: AppPort, choice: RewindChoice | None) -> None:
    if choice is None:
        app.prompt_area.input.focus()
        return
    board = app.agent_board
    if app.busy or (board is not None and board.running()):
        # (the picker stays open while a queued prompt starts; SubAgents may be writing)
        await app.notice(
            "Not rewound: a turn or a SubAgent is still running. Stop it (Esc; "
            "/agents stop ID) or let it finish, then /rewind again.",
            "warning",
        )
        return
    try:
        await _rewind(app, choice)
    except OSError as e:  # the session file cannot be written (disk full, read-only)
        await app.notice(
            f"The rewind could not be recorded in the session file ({e.strerror or e}).",
            "error",
        )
    app.prompt_area.input.focus()


async def _rewind(app: AppPort, choice: RewindChoice) -> None:
    if choice.kind in ("both", "conversation"):
        from peri_cli.session.rewind import rewind_conversation

        rewind_conversation(app.agent.session, choice.prompt.id)
        app.status.set(context_tokens=None, cache_share=None)
        await app.show_session(attached=False)  # (no SessionStart: nothing began)
        app.prompt_area.set_text(choice.prompt.text)
        await app.notice(
            f"Rewound the conversation to before prompt {choice.prompt.number}; its text is "
            "back in the prompt. The hidden messages stay in the session file."
        )
    restored: list[str] = []
    if choice.kind in ("both", "code"):
        restored = await _rewind_code(app, choice.prompt.id)
    if restored and choice.kind == "code":  # the conversation stays: tell the model
        app.agent.inbox.append(
            "[The user restored these files to how they were before an earlier prompt; "
            "read them again before relying on them: " + ", ".join(restored) + "]"
        )


async def _rewind_code(app: AppPort, prompt_id: str, *, overwrite: bool = False) -> list[str]:
    """Restore the files changed since the prompt; offers to overwrite the ones changed
    outside Peri since. Returns the paths restored."""
    from peri_cli.session.checkpoints import Checkpointer
    from peri_cli.session.rewind import apply_code, plan_code, record

    session = app.agent.session
    entries = await asyncio.to_thread(record, session)
    plan = await asyncio.to_thread(plan_code, entries, prompt_id)
    if overwrite:  # the others were restored the first time
        plan.files = plan.conflicts
    keeper = Checkpointer(session)
    result = await asyncio.to_thread(apply_code, keeper, plan, overwrite=overwrite)
    shown = [_path(app, p) for p in result.restored]
    if shown:
        await app.notice("Restored: " + ", ".join(shown))
    elif not plan.files:
        await app.notice("No file was changed by Peri since that prompt.")
    try:
        session.append(*result.records)
    except OSError as e:  # restored, but this restore itself cannot be rewound
        await app.notice(
            f"The restore could not be recorded in the session file ({e.strerror or e}).",
            "error",
        )
    for path, why in result.failed:
        await app.notice(f"Could not restore {_path(app, path)}: {why}", "error")
    for change in plan.files:
        if change.note is not None:
            await app.notice(
                f"Could not restore {_path(app, change.path)}: {change.note}", "warning"
            )
    if result.skipped and not overwrite:
        await _offer_overwrite(app, prompt_id, [_path(app, f.path) for f in result.skipped])
    return shown


async def _offer_overwrite(app: AppPort, prompt_id: str, paths: list[str]) -> None:
    from textual.content import Content

    from peri_cli.tui.format import plain
    from peri_cli.tui.screens.rewind_picker import Choice

    await app.notice("Not restored, changed outside Peri since: " + ", ".join(paths), "warning")
    question = Content.assemble(
        f"{len(paths)} file{'s were' if len(paths) != 1 else ' was'} changed outside Peri since: ",
        plain(", ".join(paths)),
        ". Overwrite with the state before that prompt?",
    )
    answers = [(False, "Keep them as they are"), (True, "Overwrite them")]

    async def answered(overwrite: bool | None) -> None:
        if overwrite:
            await _rewind_code(app, prompt_id, overwrite=True)

    await app.push_screen(Choice(question, answers), callback=answered)


def _path(app: AppPort, path: Path) -> str:
    try:
        return visible(str(path.relative_to(app.runtime.workspace)))
    except ValueError:
        return visible(str(path))
