"""/output-style: list the output styles and pick the one new sessions take (saved as
`outputStyle` in `.peri/settings.local.json`, where Claude Code saves its own); the session shown
keeps its frozen prompt. `/output-style NAME` picks without the list."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from peri_cli.tui.commands.registry import command

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort


@command("output-style", immediate=True)
async def output_style(app: AppPort, arg: str) -> None:
    if arg:
        await _choose(app, arg)
        return
    from peri_cli.extensions.output_styles import choose_style
    from peri_cli.tui.screens.style_picker import StylePicker

    runtime = app.runtime
    catalog = await asyncio.to_thread(runtime.output_styles)
    for problem in catalog.problems:
        await app.notice(problem, "warning")
    chosen, _ = choose_style(catalog, runtime.settings.outputStyle)

    async def picked(name: str | None) -> None:
        if name is not None:
            await _choose(app, name)

    picker = StylePicker(catalog.styles, session=runtime.session_style, chosen=chosen.name)
    await app.push_screen(picker, callback=picked)


async def _choose(app: AppPort, name: str) -> None:
    saved, said = await asyncio.to_thread(app.runtime.set_output_style, name)
    await app.notice(said, "info" if saved else "error")
