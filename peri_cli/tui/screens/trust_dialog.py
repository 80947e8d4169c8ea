"""Ask once whether to trust a workspace whose files would loosen something, naming each thing.

Everything shown comes from the repository (paths, setting values, import targets), so the text is
built from `Text` pieces with every string passed through `visible`, never from markup.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Protocol

from rich.text import Text
from textual.binding import Binding, BindingType

from peri_cli.base.textsafe import visible
from peri_cli.permissions.trust import Loosening, TrustState
from peri_cli.tui.ports import ScreenHost
from peri_cli.tui.screens.yes_no import YesNoScreen

CHOICES: list[tuple[bool, str, str]] = [
    (True, "Trust this folder", "remembered for this folder"),
    (False, "Don't trust", "run with all of this ignored"),
]


class TrustHost(Protocol):
    """What the dialog needs from the runtime (the TUI does not import the composition root)."""

    workspace: Path
    trust: TrustState | None

    @property
    def trust_pending(self) -> bool: ...

    def answer_trust(self, answer: bool | None) -> None: ...


def dialog_text(workspace: Path, loosenings: Sequence[Loosening]) -> Text:
    """The question: the folder, then each thing trust would enable, one per line."""
    text = Text()
    text.append("Trust this folder?\n", style="bold")
    text.append(visible(str(workspace)), style="bold")
    text.append("\n\nIts files ask for what Peri does only in a folder you trust:\n")
    for item in loosenings:
        text.append("  • ")
        text.append(visible(item.what))
        text.append(f"  (from {visible(item.source)})", style="dim")
        text.append("\n")
    text.append(
        "\nTrust it only if you trust where it came from: a cloned repository can ship these "
        "files.",
        style="dim",
    )
    return text


class TrustDialog(YesNoScreen):
    """Trust (True), don't trust (False), or no answer yet (None: Esc, asked again next run)."""

    CHOICES = CHOICES
    # The prompt takes keys while Peri starts (a message sent then is queued) and the dialog
    # opens when the runtime is built: an Enter meant for the prompt must not trust the folder
    # (and be remembered), so Enter alone says no; trusting takes 1, y, t, or a move first.
    START = 1
    ID = "trust"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("t", "answer(True)", "Trust", show=False)]

    def __init__(self, workspace: Path, loosenings: Sequence[Loosening]) -> None:
        super().__init__()
        self.workspace = workspace
        self.loosenings = list(loosenings)

    def body(self) -> Text:
        return dialog_text(self.workspace, self.loosenings)


async def settle_trust(app: ScreenHost, host: TrustHost) -> None:
    """Ask the trust question if the runtime has one open, and apply the answer; call this
    before the session is attached (the answer decides the mode and the frozen guide text)."""
    if not host.trust_pending or host.trust is None:
        return
    answered: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()

    def done(answer: bool | None) -> None:
        if not answered.done():
            answered.set_result(answer)

    await app.push_screen(TrustDialog(host.workspace, host.trust.loosenings), callback=done)
    answer = await answered
    # Recording the answer and starting the session touch the disk: off the event loop.
    await asyncio.to_thread(host.answer_trust, answer)
