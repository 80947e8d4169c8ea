"""/model and /mode: show or switch the model (checked against the provider's own list) and the
permission mode."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from peri_cli.base.models import known_models, model_info
from peri_cli.base.provider import model_listed
from peri_cli.base.textsafe import visible
from peri_cli.permissions.asking import MODES
from peri_cli.tui.commands.registry import command
from peri_cli.tui.format import tokens

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort


@command("model", immediate=True)
async def model(app: AppPort, arg: str) -> None:
    agent = app.agent
    # The provider's own list, asked once per provider (None: it has none, or is offline).
    listed = await agent.provider.list_models()
    if not arg and listed:
        await _pick(app, listed)
        return
    if not arg:
        names = ", ".join(visible(n[:60]) for n in (listed or known_models())[:12])
        await app.notice(
            f"Model: {agent.model} (context window {tokens(app.runtime.context_window)}). "
            f"Switch with /model NAME, e.g. {names}, …"
        )
        return
    if listed is not None and not model_listed(arg, listed):
        near = difflib.get_close_matches(arg, listed, n=5, cutoff=0.3)
        few = [*near, *(n for n in listed if n not in near)][:5]
        more = ", …" if len(listed) > len(few) else ""
        await app.notice(
            f"The provider has no model {arg!r}; still using {agent.model}. "
            f"It has: {', '.join(visible(n[:60]) for n in few)}{more}",
            "error",
        )
        return
    await _switch(app, arg)


async def _pick(app: AppPort, listed: list[str]) -> None:
    """The picker, the provider's current models first; Enter switches to the one picked."""
    from peri_cli.tui.screens.model_picker import ModelPicker, ordered

    models, current = ordered(listed, app.runtime.provider_name)

    async def picked(name: str | None) -> None:
        if name is not None and name != app.agent.model:
            await _switch(app, name)

    picker = ModelPicker(models, now=app.agent.model, current=current)
    await app.push_screen(picker, callback=picked)


async def _switch(app: AppPort, arg: str) -> None:
    agent = app.agent
    app.runtime.model = agent.model = arg
    known = model_info(arg).known
    await app.notice(
        f"Model switched to {arg} (context window {tokens(app.runtime.context_window)})"
        + ("" if known else "; this model is not in Peri's table, so the window is a guess"),
        "info" if known else "warning",
    )
    app.refresh_status()


@command("mode", immediate=True)
async def mode(app: AppPort, arg: str) -> None:
    agent = app.agent
    if not arg:
        await app.notice(
            f"Permission mode: {agent.policy.mode}. Switch with /mode {' | '.join(MODES)}."
        )
        return
    if arg not in MODES:
        await app.notice(f"Unknown mode {arg!r}; choose one of {', '.join(MODES)}.", "error")
        return
    app.runtime.mode = agent.policy.mode = arg
    await app.notice(f"Permission mode is now {arg}.")
    app.refresh_status()
