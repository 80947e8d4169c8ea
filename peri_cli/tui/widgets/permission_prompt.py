"""Approval for one tool call: allow once, allow for the session, or deny.

It stands above the prompt (never inside the scrolling conversation), so the question is on
screen whatever the conversation does. The call is shown in full (`tui/approval.py`); when it
is taller than the room left, only the body scrolls (PgUp/PgDn) and says so, while the
question and the choices stay in view. Once answered it steps aside and the conversation keeps
a one-line record (`ApprovalRecord`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from peri_cli.core.events import PermissionAnswer
from peri_cli.tui.approval import approval_body, line_count
from peri_cli.tui.format import plain

CHOICES: list[tuple[PermissionAnswer, str]] = [
    ("allow", "Allow once"),
    ("allow_session", "Allow {tool} for this session"),
    ("deny", "Deny"),
]
RECORD = {"allow": "allowed once", "allow_session": "allowed for this session", "deny": "denied"}
ANSWER_KEYS = frozenset("123yan")
KEYS_HELP = "↑↓ Enter · y / a / n · Esc denies"


class PermissionPrompt(Vertical, can_focus=True):
    DEFAULT_CSS = """
    PermissionPrompt {
        height: auto;
        margin: 0 1;
        padding: 0 1;
        border: round $warning;
        background: $warning 8%;
        &:focus { background: $warning 15%; }
        & > Static { width: 1fr; height: auto; }
        & > .approval--header, & > .approval--choices, & > .approval--keys {
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > .approval--header { color: $text-muted; }
        & > .approval--body {
            height: auto;
            scrollbar-size-vertical: 1;
            & > Static { width: 1fr; height: auto; }
        }
        & > .approval--hint { color: $warning; text-style: italic; }
        & > .approval--question { text-style: bold; color: $warning; }
        & > .approval--keys { color: $text-muted; }
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

    selected = reactive(0, init=False)

    class Answered(Message):
        def __init__(self, prompt: PermissionPrompt, answer: PermissionAnswer | None) -> None:
            super().__init__()
            self.prompt = prompt
            self.answer = answer

    def __init__(
        self,
        tool: str,
        tool_input: dict[str, Any],
        reason: str,
        future: asyncio.Future[PermissionAnswer],
        *,
        workspace: Path | None = None,
        agent: str | None = None,
    ) -> None:
        super().__init__()
        self.tool = tool
        self.tool_input = tool_input
        self.reason = reason
        self.future = future
        self.answer: PermissionAnswer | None = None
        self.answered = False
        self.lines = line_count(tool, tool_input)
        asker = Content.assemble(" · asked by ", plain(agent, "bold")) if agent else ""
        self.header = Static(
            Content.assemble(plain(tool, "bold"), asker, " · ", plain(reason)),
            classes="approval--header",
        )
        self.body = VerticalScroll(
            Static(approval_body(tool, tool_input, workspace)), classes="approval--body"
        )
        self.body.can_focus = False
        self.hint = Static("", classes="approval--hint")
        self.hint.display = False
        self.question = Static(
            Content.assemble("Allow ", plain(tool), "? 1 / 2 / 3"), classes="approval--question"
        )
        self.choices = Static(self._choices(), classes="approval--choices")
        self.keys = Static(KEYS_HELP, classes="approval--keys")

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.body
        yield self.hint
        yield self.question
        yield self.choices
        yield self.keys

    # fitting the screen

    def fit(self, room: int) -> None:
        """Take at most `room` rows: the body gets what the rest leaves (at least one row)."""
        fixed = sum(
            w.outer_size.height for w in (self.header, self.question, self.choices, self.keys)
        )
        chrome = fixed + 1 + self.styles.gutter.height  # +1: the hint's row, always reserved
        limit = max(1, room - chrome)
        if self.body.styles.max_height is None or self.body.styles.max_height.value != limit:
            self.body.styles.max_height = limit
        self.call_after_refresh(self._update_hint)

    def on_resize(self, _event: events.Resize) -> None:
        self.call_after_refresh(self._update_hint)

    def _update_hint(self) -> None:
        body = self.body
        overflow = body.max_scroll_y > 0
        if overflow:
            where = "end" if body.scroll_y >= body.max_scroll_y else "more below"
            if 0 < body.scroll_y < body.max_scroll_y:
                where = "more above and below"
            elif body.scroll_y >= body.max_scroll_y:
                where = "more above"
            count = f"{self.lines} line{'s' if self.lines != 1 else ''}"
            self.hint.update(Content(f"{count} · PgUp/PgDn · {where}"))
        self.hint.display = overflow

    def scroll_page(self, pages: int) -> None:
        body = self.body
        step = max(1, body.scrollable_content_region.height - 1)
        body.scroll_to(y=body.scroll_y + pages * step, animate=False)
        self.call_after_refresh(self._update_hint)

    def scroll_body(self, *, end: bool) -> None:
        self.body.scroll_to(y=self.body.max_scroll_y if end else 0, animate=False)
        self.call_after_refresh(self._update_hint)

    # choosing

    def _choices(self) -> Content:
        rows: list[Content] = []
        for i, (_, label) in enumerate(CHOICES):
            text = Content.assemble(f"{i + 1}. ", plain(label.format(tool=self.tool)))
            if i == self.selected:
                rows.append(Content.assemble(("› ", "bold"), text.stylize("reverse")))
            else:
                rows.append(Content.assemble("  ", text))
        return Content("\n").join(rows)

    def watch_selected(self) -> None:
        self.choices.update(self._choices())

    def action_move(self, step: int) -> None:
        if not self.answered:
            self.selected = (self.selected + step) % len(CHOICES)

    def action_choose(self) -> None:
        self.action_answer(CHOICES[self.selected][0])

    def action_answer(self, answer: PermissionAnswer) -> None:
        if self.answered:
            return
        self.answer = answer
        if not self.future.done():
            self.future.set_result(answer)
        self._close()

    def cancel(self) -> None:
        """The turn ended without an answer (cancelled): record that and step aside."""
        if not self.answered:
            self._close()

    def _close(self) -> None:
        self.answered = True
        self.can_focus = False
        self.post_message(self.Answered(self, self.answer))

    def on_key(self, event: events.Key) -> None:
        # only the answer keys act here: a stray letter neither answers nor leaves the approval
        if event.is_printable and event.character not in ANSWER_KEYS:
            event.stop()
            event.prevent_default()

    def on_click(self, _event: events.Click) -> None:
        if not self.answered:
            self.focus()


class ApprovalRecord(Static):
    """What became of an approval, one line in the conversation."""

    DEFAULT_CSS = """
    ApprovalRecord { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, tool: str, answer: PermissionAnswer | None) -> None:
        self.tool = tool
        self.answer = answer
        what = RECORD.get(answer or "", "not answered (the turn was stopped)")
        super().__init__(Content.assemble(plain(tool), f": {what}"))


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
        self.display = bool(self.query(PermissionPrompt))
