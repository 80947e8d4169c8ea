"""Ask before a plugin is installed or updated: it is code that will run as the user's own (its
hooks and servers start by themselves), so the question shows what it brings, or for an update
which of the files that run changed. Every string comes from the plugin: `Text` pieces through
`visible`, never markup."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from peri_cli.base.textsafe import visible
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

    def __init__(self, key: str, described: str, problems: Sequence[str] = ()) -> None:
        super().__init__()
        self.key, self.described, self.problems = key, described, problems

    def body(self) -> Text:
        text = Text()
        text.append("Install a plugin?\n", style="bold")
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
