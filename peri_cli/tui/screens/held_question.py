"""Ask about a protected file a sandboxed command's git put in the workspace (a checkout's
`.mcp.json`, a pull's `.claude/settings.json`): git tracks it, so it stays as git left it, but
Peri does not load it (settings, servers, skills, agents) until the user says so.

The path and the reason come from the repository and the check: the text is built from `Text`
pieces with every string passed through `visible`, never from markup."""

from __future__ import annotations

import asyncio
import weakref

from rich.text import Text

from peri_cli.agent.host import HeldPath, SessionHost
from peri_cli.base.textsafe import visible
from peri_cli.tui.ports import ScreenHost
from peri_cli.tui.screens.yes_no import YesNoScreen

CHOICES: list[tuple[bool, str, str]] = [
    (True, "Load it", "Peri may read it from now on in this session"),
    (False, "Keep it held back", "not loaded this session; the file stays as git left it"),
]
_ASKING: weakref.WeakSet[object] = weakref.WeakSet()  # apps with a question open


def question_text(held: HeldPath) -> Text:
    text = Text()
    text.append("Load a protected file a sandboxed command's git changed?\n", style="bold")
    text.append(visible(held.path), style="bold")
    text.append("\n")
    text.append(visible(held.why), style="dim")
    text.append(
        "\n\nGit tracks it, so it was left as git put it (a checkout, a pull or a stash pop "
        "in a sandboxed command). It can configure Peri or start a server: load it only if "
        "you expected that change.",
        style="dim",
    )
    return text


class HeldQuestionScreen(YesNoScreen):
    """Load (True), keep held back (False), or decide later (None: asked again)."""

    CHOICES = CHOICES
    START = 1  # it opens after a command, maybe while the user types: Enter alone keeps it held
    ID = "held"

    def __init__(self, held: HeldPath) -> None:
        super().__init__()
        self.held = held

    def body(self) -> Text:
        return question_text(self.held)


async def ask_held(app: ScreenHost, host: SessionHost) -> None:
    """Ask about each held path not asked about yet, one at a time; apply each answer."""
    if app in _ASKING:
        return  # the open question's loop asks about the new ones too
    _ASKING.add(app)
    try:
        while pending := host.held_back():
            held = pending[0]
            answered: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()

            def done(answer: bool | None, f: asyncio.Future[bool | None] = answered) -> None:
                if not f.done():
                    f.set_result(answer)

            await app.push_screen(HeldQuestionScreen(held), callback=done)
            answer = await answered
            host.confirm_held(held.path, answer)
            if answer is None:
                return  # decided later: asked again after the next command
    finally:
        _ASKING.discard(app)
