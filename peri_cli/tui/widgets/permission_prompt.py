"""Approval for one tool call: allow once, allow the suggested rules for the session or always in
this project, deny, or deny with a note to the model.

It stands above the prompt (never inside the scrolling conversation), so the question is on
screen whatever the conversation does. The call is shown in full (`tui/approval.py`); when it
is taller than the room left, only the body scrolls (PgUp/PgDn) and says so, while the
question and the choices stay in view. Once answered it steps aside and the conversation keeps
a one-line record (`ApprovalRecord`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Static

from peri_cli.tui.approval import (
    Choice,
    approval_body,
    choices_for,
    line_count,
    record_text,
    subject,
)
from peri_cli.tui.format import plain

if TYPE_CHECKING:  # (the core and pydantic load after the first frame)
    from peri_cli.base.events import PermissionAnswer, PermissionRequested

LETTERS = frozenset("yapn")
CHOICE_INDENT = 8  # "› 1. y  ": where a choice's label begins
NOTE_PLACEHOLDER = "Tell the model why, or what to do instead (Enter denies, Esc without a note)"


class PermissionPrompt(Vertical, can_focus=True):
    DEFAULT_CSS = """
    PermissionPrompt {
        height: auto;
        margin: 0 1;
        padding: 0 1;
        border: round $warning;
        background: $warning 8%;
        &:focus, &:focus-within { background: $warning 15%; }
        & > Static { width: 1fr; height: auto; }
        & > .approval--header {
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
        /* (Input's own :focus rule brings back its tall border: name both states) */
        & > Input.approval--note, & > Input.approval--note:focus {
            height: 1;
            border: none;
            padding: 0 1;
            margin: 0;
            background: $boost;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("enter", "choose", "Choose"),
        Binding("1", "pick(0)", "", show=False),
        Binding("2", "pick(1)", "", show=False),
        Binding("3", "pick(2)", "", show=False),
        Binding("4", "pick(3)", "", show=False),
        Binding("5", "pick(4)", "", show=False),
        Binding("6", "pick(5)", "", show=False),
        Binding("y", "letter('y')", "Allow once"),
        Binding("a", "letter('a')", "Allow for session", show=False),
        Binding("p", "letter('p')", "Always allow here", show=False),
        Binding("n", "letter('n')", "Deny"),
        Binding("escape", "answer('deny')", "Deny", show=False),
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
        request: PermissionRequested | None = None,
        current: str | None = None,
    ) -> None:
        """`request`: the loop's event, whose suggested rules are offered and whose deny note
        is set before a "deny" is answered; `current`: the text of the file an Edit or a Write
        changes, for a numbered diff."""
        super().__init__()
        self.tool = tool
        self.agent = agent  # the SubAgent asking, if not the main agent
        self.tool_input = tool_input
        self.reason = reason
        self.future = future
        self.request = request
        self.suggestions = list(request.suggestions) if request is not None else []
        self.options: list[Choice] = choices_for(self.suggestions, tool)
        self.answer: PermissionAnswer | None = None
        self.note = ""
        self.answered = False
        self.lines = line_count(tool, tool_input, current)
        asker = Content.assemble(" · asked by ", plain(agent, "bold")) if agent else ""
        self.header = Static(
            Content.assemble(plain(tool, "bold"), asker, " · ", plain(reason)),
            classes="approval--header",
        )
        body = approval_body(tool, tool_input, workspace, current)
        self.body = VerticalScroll(Static(body), classes="approval--body")
        self.body.can_focus = False
        self.hint = Static("", classes="approval--hint")
        self.hint.display = False
        self.note_input = Input(placeholder=NOTE_PLACEHOLDER, classes="approval--note")
        self.note_input.display = False
        self.question = Static(self._question(), classes="approval--question")
        self._wrapped_at = 0  # the width the choices were last wrapped for
        self.choices = Static(self._choices(), classes="approval--choices")

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.body
        yield self.hint
        yield self.question
        yield self.choices
        yield self.note_input

    # fitting the screen

    def fit(self, room: int) -> None:
        """Take at most `room` rows: the body gets what the rest leaves (at least one row)."""
        fixed = sum(
            w.outer_size.height
            for w in (self.header, self.question, self.choices, self.note_input)
            if w.display
        )
        chrome = fixed + 1 + self.styles.gutter.height  # +1: the hint's row, always reserved
        limit = max(1, room - chrome)
        if self.body.styles.max_height is None or self.body.styles.max_height.value != limit:
            self.body.styles.max_height = limit
        self.call_after_refresh(self._update_hint)

    def on_resize(self, _event: events.Resize) -> None:
        self.call_after_refresh(self._rewrap)
        self.call_after_refresh(self._update_hint)

    def _rewrap(self) -> None:
        """The labels wrapped for the choices' width now (once it is known, and on a resize)."""
        if self.choices.size.width != self._wrapped_at:
            self._wrapped_at = self.choices.size.width
            self.choices.update(self._choices())
            self.app.call_after_refresh(self._refit)  # its rows changed: the body gets the rest

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
        """One row a choice; a label that names rules wraps under itself (indented past the
        number and the letter), whole at any width."""
        rows: list[Content] = []
        room = self._wrapped_at - CHOICE_INDENT if self._wrapped_at else 0
        for i, choice in enumerate(self.options):
            key = (choice.key or " ") + "  "
            label = ("\n" + " " * CHOICE_INDENT).join(choice.rows(room))
            text = Content.assemble(f"{i + 1}. ", (key, "dim"), plain(label))
            if i == self.selected:
                rows.append(Content.assemble(("› ", "bold"), text.stylize("reverse")))
            else:
                rows.append(Content.assemble("  ", text))
        return Content("\n").join(rows)

    def _question(self) -> Content:
        """The question with the keys that answer it (each choice shows its letter)."""
        keys = (
            "Enter denies with the note · Esc without"
            if self.note_input.display
            else ("↑↓ Enter · Esc denies")
        )
        return Content.assemble(
            "Allow ",
            subject(self.tool, self.tool_input),
            f"? 1–{len(self.options)}",
            (f"  {keys}", "not bold dim"),
        )

    def watch_selected(self) -> None:
        self.choices.update(self._choices())

    def action_move(self, step: int) -> None:
        if not self.answered and not self.note_input.display:
            self.selected = (self.selected + step) % len(self.options)

    def action_choose(self) -> None:
        self._take(self.options[self.selected])

    def action_pick(self, index: int) -> None:
        if 0 <= index < len(self.options) and not self.note_input.display:
            self.selected = index
            self._take(self.options[index])

    def action_letter(self, key: str) -> None:
        """A choice's letter; a letter of a choice not offered here does nothing."""
        for index, choice in enumerate(self.options):
            if choice.key == key:
                self.action_pick(index)
                return

    def _take(self, choice: Choice) -> None:
        if choice.note:
            self.ask_note()
            return
        if self.request is not None and choice.keep_in and not self.answered:
            self.request.keep_in = choice.keep_in  # (read once the future is set)
        self.action_answer(choice.answer)

    def ask_note(self) -> None:
        """Show the one-line note input; Enter denies with what was typed."""
        if self.answered:
            return
        self.note_input.display = True
        self.question.update(self._question())
        self.note_input.focus()
        self.app.call_after_refresh(self._refit)

    def _refit(self) -> None:
        fit = getattr(self.app, "fit_approval", None)
        if callable(fit):
            fit()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.note = " ".join(event.value.split())
        self.action_answer("deny")

    def action_answer(self, answer: PermissionAnswer) -> None:
        if self.answered:
            return
        self.answer = answer
        if self.request is not None and answer == "deny":
            self.request.deny_note = self.note
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
        self.note_input.display = False
        self.post_message(self.Answered(self, self.answer))

    def on_key(self, event: events.Key) -> None:
        # only the answer keys act here: a stray letter neither answers nor leaves the approval
        if self.note_input.display:
            return  # typing the note
        if event.is_printable and not self._answer_key(event.character or ""):
            event.stop()
            event.prevent_default()

    def _answer_key(self, character: str) -> bool:
        if character in LETTERS:
            return True
        return character.isdigit() and 1 <= int(character) <= len(self.options)

    def on_click(self, _event: events.Click) -> None:
        if not self.answered and not self.note_input.display:
            self.focus()


class ApprovalRecord(Static):
    """What became of an approval, one line in the conversation."""

    DEFAULT_CSS = """
    ApprovalRecord { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    """

    def __init__(
        self, tool: str, answer: PermissionAnswer | None, note: str = "", *, text: str = ""
    ) -> None:
        """`text`: what became of it, when not the usual words (a Network question's)."""
        self.tool = tool
        self.answer = answer
        said = text or record_text(answer, note)
        super().__init__(Content.assemble(plain(tool), ": ", plain(said)))
