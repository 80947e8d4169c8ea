"""Ask before a plugin is installed or updated: it is code that will run as the user's own (its
hooks and servers start by themselves), so the question shows what it brings, or for an update
which of the files that run changed. Every string comes from the plugin: `Text` pieces through
`visible`, never markup."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from rich.text import Text

from peri_cli.agent.host import SessionHost
from peri_cli.base.textsafe import visible
from peri_cli.tui.ports import ScreenHost
from peri_cli.tui.screens.yes_no import Choices, YesNoScreen

CHOICES: Choices = [
    (True, "Install it", "its hooks and MCP servers run with your permissions"),
    (False, "Don't install it", "nothing is copied"),
]


class PluginQuestionScreen(YesNoScreen):
    """Install (True), don't (False), or no answer (None: Esc; nothing is installed)."""

    CHOICES = CHOICES
    START = 1  # Enter alone says no: installing takes 1, y, or a move first
    ID = "plugin"

    def __init__(
        self, key: str, described: str, problems: Sequence[str] = (), *, by_project: bool = False
    ) -> None:
        super().__init__()
        self.key, self.described, self.problems = key, described, problems
        self.by_project = by_project
        if not by_project:  # /plugin install: Esc is a no; a project's offer comes back next start
            self.ESC_MEANS = "Esc: nothing is installed"

    def body(self) -> Text:
        text = Text()
        text.append("Install a plugin?\n", style="bold")
        if self.by_project:
            text.append("This project's settings enable it; it is not installed.\n", style="dim")
        for line in self.described.splitlines():
            text.append(visible(line) + "\n")
        for problem in self.problems:
            text.append(f"warning: {visible(problem)}\n", style="yellow")
        text.append(
            "\nA plugin is code you choose to run: install it only if you know where it came "
            "from. It applies from the next session.",
            style="dim",
        )
        return text


async def ask_missing_plugins(app: ScreenHost, host: SessionHost) -> list[str]:
    """Offer, once each, the plugins this trusted workspace enables that are not installed;
    returns lines to show (what was installed, what went wrong)."""
    from peri_cli.extensions.plugins.install import add_marketplace, marketplace, stage
    from peri_cli.extensions.plugins.offers import offers, remember_asked
    from peri_cli.extensions.plugins.parts import describe
    from peri_cli.extensions.plugins.registry import PluginError, set_enabled

    home, layers = host.peri_home, host.loaded.layers if host.loaded else ()
    trusted = host.trust is not None and host.trust.trusted
    lines: list[str] = []
    for offer in offers(home, host.plugins.missing, layers, trusted=trusted):
        try:
            if offer.marketplace_source:
                await asyncio.to_thread(
                    add_marketplace, home, offer.marketplace_source, cwd=host.workspace
                )
            await asyncio.to_thread(marketplace, home, offer.key.split("@", 1)[1])
            staged = await asyncio.to_thread(stage, home, offer.key)
        except PluginError as e:
            lines.append(f"plugin {offer.key} (enabled by this project): {e}")
            continue
        try:
            screen = PluginQuestionScreen(
                offer.key, describe(staged.parts), staged.parts.problems, by_project=True
            )
            said = await answer(app, screen)
            if said is not None:
                remember_asked(home, offer.key)
            if said:
                await asyncio.to_thread(staged.commit)
                set_enabled(home / "settings.json", offer.key, True)
                lines.append(f"Installed {offer.key}; it applies from the next session.")
        except PluginError as e:
            lines.append(f"plugin {offer.key}: {e}")
        finally:
            staged.discard()
    return lines


async def answer(app: ScreenHost, screen: PluginQuestionScreen) -> bool | None:
    answered: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()

    def done(answer: bool | None) -> None:
        if not answered.done():
            answered.set_result(answer)

    await app.push_screen(screen, callback=done)
    return await answered
