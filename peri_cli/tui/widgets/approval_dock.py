"""Where a pending approval stands: between the conversation and the prompt. Its own module so
that the first frame (which shows it empty) does not import the approval widgets themselves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.message import Message

if TYPE_CHECKING:
    from peri_cli.tui.widgets.permission_prompt import PermissionPrompt


class ApprovalDock(Vertical):
    """Where a pending approval stands: between the conversation and the prompt."""

    DEFAULT_CSS = """
    ApprovalDock { height: auto; }
    """

    class Asked(Message):
        """An approval was put up: the app fits it to the screen."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.display = False

    @property
    def pending(self) -> PermissionPrompt | None:
        if not self.children:  # nothing asked (the keys check this at every footer refresh)
            return None
        from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

        for prompt in self.query(PermissionPrompt):
            if not prompt.answered:
                return prompt
        return None

    async def ask(self, prompt: PermissionPrompt) -> None:
        self.display = True
        await self.mount(prompt)
        self.post_message(self.Asked())

    async def close(self, prompt: PermissionPrompt) -> None:
        if prompt.parent is self:
            await prompt.remove()
        self.display = bool(self.children)
