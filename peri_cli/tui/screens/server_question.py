"""Ask once about a project MCP server added to `.mcp.json` after the workspace was trusted: it runs
a command (or reaches a URL) the repository chose, so it starts only when the user says so.

The name, command and file come from the repository: the text is built from `Text` pieces with
every string passed through `visible`, never from markup."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Static

from peri_cli.core.host import ServerQuestion, SessionHost
from peri_cli.core.textsafe import visible

CHOICES: list[tuple[bool, str, str]] = [
    (True, "Start it", "remembered for this folder"),
    (False, "Don't start it", "remembered; --trust-workspace starts it for one run"),
]


def question_text(question: ServerQuestion) -> Text:
    text = Text()
    text.append("Start a new MCP server from this project?\n", style="bold")
    text.append(visible(question.name), style="bold")
    text.append(f"  (from {visible(question.source)})\n", style="dim")
    text.append("runs: ")
    text.append(visible(question.what))
    text.append(
        "\n\nIt was added after you trusted this folder. A server runs with your permissions; "
        "start it only if you know where it came from.",
        style="dim",
    )
    return text


class ServerQuestionScreen(ModalScreen[bool | None]):
    """Start (True), don't start (False), or no answer yet (None: Esc, asked again next run)."""

    DEFAULT_CSS = """
    ServerQuestionScreen { align: center middle; }
    ServerQuestionScreen > Vertical {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    ServerQuestionScreen VerticalScroll { height: auto; max-height: 20; }
    ServerQuestionScreen #server-choices { padding: 1 0 0 0; }
    ServerQuestionScreen #server-help { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False, priority=True),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("enter", "choose", "Choose", priority=True),
        Binding("1,y", "answer(True)", "Start"),
        Binding("2,n", "answer(False)", "Don't start"),
        Binding("escape", "dismiss_none", "Decide later"),
    ]

    selected = reactive(0)

    def __init__(self, question: ServerQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll():
                yield Static(question_text(self.question), id="server-body")
            yield Static(self._choices(), id="server-choices")
            yield Static(
                Text("↑↓ Enter, or 1 / 2 (y / n); Esc decides later (asked again next time)"),
                id="server-help",
            )

    def _choices(self) -> Text:
        text = Text()
        for i, (_, label, note) in enumerate(CHOICES):
            line = f"{i + 1}. {label}"
            if i == self.selected:
                text.append(f" › {line} ", style="reverse")
            else:
                text.append(f"   {line} ")
            text.append(f"  {note}\n", style="dim")
        return text

    def watch_selected(self) -> None:
        if self.is_mounted:
            self.query_one("#server-choices", Static).update(self._choices())

    def action_move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(CHOICES)

    def action_choose(self) -> None:
        self.dismiss(CHOICES[self.selected][0])

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


async def ask_new_servers(app: App[Any], host: SessionHost) -> list[str]:
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
