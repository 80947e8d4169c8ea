"""Ask once about a project MCP server added to `.mcp.json` after the workspace was trusted: it runs
a command (or reaches a URL) the repository chose, so it starts only when the user says so.

The name, the entry's fields and the file come from the repository: the text is built from `Text`
pieces with every string passed through `visible`, never from markup."""

from __future__ import annotations

import asyncio

from rich.text import Text

from peri_cli.agent.host import ServerQuestion, SessionHost
from peri_cli.base.textsafe import visible
from peri_cli.tui.ports import ScreenHost
from peri_cli.tui.screens.yes_no import YesNoScreen

CHOICES: list[tuple[bool, str, str]] = [
    (True, "Start it", "remembered for this folder"),
    (False, "Don't start it", "remembered; --trust-workspace starts it for one run"),
]


def question_text(question: ServerQuestion) -> Text:
    text = Text()
    text.append("Start a new MCP server from this project?\n", style="bold")
    text.append(visible(question.name), style="bold")
    text.append(f"  (from {visible(question.source)})\n", style="dim")
    # Everything the entry decides, one per line: an `env` (NODE_OPTIONS) or a header (a key
    # sent to the repository's URL) matters as much as the command.
    for label, what in question.what:
        text.append(f"{label}: ", style="dim")
        text.append(visible(what))
        text.append("\n")
    text.append(
        "\nIt was added after you trusted this folder. A server runs with your permissions; "
        "start it only if you know where it came from.",
        style="dim",
    )
    return text


class ServerQuestionScreen(YesNoScreen):
    """Start (True), don't start (False), or no answer yet (None: Esc, asked again next run)."""

    CHOICES = CHOICES
    # It opens from a worker right after the session attaches, maybe while the user is typing
    # their first message: an Enter meant for the prompt must not start a server (and be
    # remembered), so Enter alone says no; starting it takes 1, y, or a move first.
    START = 1
    ID = "server"

    def __init__(self, question: ServerQuestion) -> None:
        super().__init__()
        self.question = question

    def body(self) -> Text:
        return question_text(self.question)


async def ask_new_servers(app: ScreenHost, host: SessionHost) -> list[str]:
    """Ask about each project server waiting for the user's word, one at a time; apply each
    answer. Returns warning lines (an answer that could not be remembered)."""
    warnings: list[str] = []
    for question in host.server_questions():
        answered: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()

        def done(answer: bool | None, answered: asyncio.Future[bool | None] = answered) -> None:
            if not answered.done():
                answered.set_result(answer)

        await app.push_screen(ServerQuestionScreen(question), callback=done)
        answer = await answered
        problem = await asyncio.to_thread(host.answer_server, question.name, answer)
        if problem:
            warnings.append(problem)
    return warnings
