"""/plugin: browse the marketplaces, install a plugin (after a question that shows what it
brings), enable, disable or uninstall one. What changes applies from the next session: a
session's frozen prompt lists its skills and agents as they were when it began."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from peri_cli.base.textsafe import visible
from peri_cli.extensions.plugins.install import marketplace, stage, uninstall
from peri_cli.extensions.plugins.parts import describe
from peri_cli.extensions.plugins.registry import (
    PluginError,
    enabled_table,
    installed,
    marketplaces,
    set_enabled,
)
from peri_cli.tui.commands.registry import command
from peri_cli.tui.screens.plugin_question import PluginQuestionScreen, answer

if TYPE_CHECKING:
    from pathlib import Path

    from peri_cli.tui.ports import AppPort

USAGE = "Usage: /plugin [install|enable|disable|uninstall NAME@MARKETPLACE]"


@command("plugin", immediate=True)
async def plugin(app: AppPort, arg: str) -> None:
    home = app.runtime.peri_home
    action, _, key = arg.strip().partition(" ")
    key = key.strip()
    try:
        if not action:
            await app.conversation.add(Static(_browse(app, home), classes="help"))
            await app.notice(USAGE.replace("Usage: ", "Then: "))
        elif action == "install" and key:
            await _install(app, home, key)
        elif action in ("enable", "disable") and key:
            if key not in installed(home):
                raise PluginError(f"{key} is not installed")
            set_enabled(home / "settings.json", key, action == "enable")
            await app.notice(f"{action.capitalize()}d {key}; it applies from the next session.")
        elif action == "uninstall" and key:
            await asyncio.to_thread(uninstall, home, key)
            set_enabled(home / "settings.json", key, None)
            await app.notice(f"Uninstalled {key}.")
        else:
            await app.notice(USAGE, "warning")
    except PluginError as e:
        await app.notice(str(e), "error")


def _browse(app: AppPort, home: Path) -> Text:
    have = installed(home)
    enabled = enabled_table(home / "settings.json")  # as it is now, not at the start
    text = Text()
    known = marketplaces(home)
    if not known:
        text.append("No marketplaces. Add one: peri plugin marketplace add SOURCE\n")
    for name in sorted(known):
        text.append(f"{visible(name)}\n", style="bold")
        try:
            listed = marketplace(home, name)[1].plugins
        except PluginError as e:
            text.append(f"  {visible(str(e))}\n", style="red")
            continue
        for p in listed:
            key = f"{p.name}@{name}"
            state = "not installed"
            if key in have:
                state = "enabled" if enabled.get(key) else "installed, disabled"
            text.append(f"  {visible(key)}", style="bold" if key in have else "")
            text.append(f"  {state}", style="green" if state == "enabled" else "dim")
            if p.description:
                text.append(f"  {visible(p.description)[:120]}", style="dim")
            text.append("\n")
    return text


async def _install(app: AppPort, home: Path, key: str) -> None:
    await app.notice(f"Reading {key}…")
    staged = await asyncio.to_thread(stage, home, key)
    try:
        screen = PluginQuestionScreen(key, describe(staged.parts), staged.parts.problems)
        if await answer(app, screen) is not True:
            await app.notice(f"{key}: not installed.")
            return
        await asyncio.to_thread(staged.commit)
    finally:
        staged.discard()
    set_enabled(home / "settings.json", key, True)
    await app.notice(f"Installed and enabled {key}; it applies from the next session.")
