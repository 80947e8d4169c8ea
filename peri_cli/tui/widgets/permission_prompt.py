"""Inline approval for one tool call: allow once, allow for the session, or deny.

The widget answers the loop's PermissionRequested future itself, then shrinks to a one-line record.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from peri_cli.core.events import PermissionAnswer
from peri_cli.tui.format import markup
from peri_cli.tui.widgets.tool_call import summarize_input

CHOICES: list[tuple[PermissionAnswer, str]] = [
    ("allow", "Allow once"),
    ("allow_session", "Allow {tool} for this session"),
    ("deny", "Deny"),
]
_RECORD = {"allow": "allowed once", "allow_session": "allowed for this session", "deny": "denied"}


class PermissionPrompt(Static, can_focus=True):
    DEFAULT_CSS = """
    PermissionPrompt {
        margin: 1 0 0 0;
        padding: 0 1;
        border: round $warning;
        background: $warning 8%;
    }
    PermissionPrompt:focus { border: round $warning; background: $warning 15%; }
    PermissionPrompt.-answered {
        border: none;
        background: transparent;
        color: $text-muted;
        padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("enter", "choose", "Choose"),
        Binding("1,y", "answer('allow')", "Allow once"),
        Binding("2,a", "answer('allow_session')", "Allow for session"),
        Binding("3,n,escape", "answer('deny')", "Deny"),
    ]

    selected = reactive(0)

    class Answered(Message):
        def __init__(self, answer: PermissionAnswer | None) -> None:
            super().__init__()
            self.answer = answer

    def __init__(
        self,
        tool: str,
        tool_input: dict[str, Any],
        reason: str,
        future: asyncio.Future[PermissionAnswer],
    ) -> None:
        super().__init__()
        self.tool = tool
        self.tool_input = tool_input
        self.reason = reason
        self.future = future
        self.answer: PermissionAnswer | None = None

    def render(self) -> str:
        if self.has_class("-answered"):
            what = _RECORD.get(self.answer or "", "cancelled")
            return f"[dim]{markup(self.tool)}: {what}[/]"
        args = summarize_input(self.tool, self.tool_input)
        lines = [f"[b $warning]Allow {markup(self.tool)}?[/]  [dim]{markup(self.reason)}[/]"]
        if args:
            lines.append(f"  {markup(args)}")
        lines.append("")
        for i, (_, label) in enumerate(CHOICES):
            text = f"{i + 1}. {label.format(tool=markup(self.tool))}"
            lines.append(f"[reverse] › {text} [/]" if i == self.selected else f"   {text}")
        lines.append("[dim]↑↓ Enter, or 1 / 2 / 3 (y / a / n); Esc denies[/]")
        return "\n".join(lines)

    def action_move(self, step: int) -> None:
        if not self.has_class("-answered"):
            self.selected = (self.selected + step) % len(CHOICES)

    def action_choose(self) -> None:
        self.action_answer(CHOICES[self.selected][0])

    def action_answer(self, answer: PermissionAnswer) -> None:
        if self.has_class("-answered"):
            return
        self.answer = answer
        if not self.future.done():
            self.future.set_result(answer)
        self._close()
        self.post_message(self.Answered(answer))

    def cancel(self) -> None:
        """The turn ended without an answer (cancelled): record that and step aside."""
        if not self.has_class("-answered"):
            self._close()

    def _close(self) -> None:
        self.add_class("-answered")
        self.can_focus = False
        self.refresh(layout=True)

    def on_click(self, event: events.Click) -> None:
        self.focus()
