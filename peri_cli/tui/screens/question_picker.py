"""The question with options (AskUserQuestion, ExitPlanMode's approval) as a modal picker, keyboard
only: ↑↓ and Enter (or the option's number), Space to tick one of several, the last line for an
answer of one's own (for a plan: keep planning, with a note); Esc dismisses (the model is told).

A plan is drawn as Markdown by the reply widget (`visible` text, never markup); questions, headers
and labels are the model's too and reach the screen as `Text` pieces through `visible`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from peri_cli.base.questions import KEEP_PLANNING, Answers, Asking, Question
from peri_cli.base.textsafe import visible
from peri_cli.tui.widgets.assistant_message import AssistantMessage

OWN_ANSWER = "Type your own answer"


@dataclass
class Picked:
    """What the person chose: each question's answer, and a plan's note (keep planning)."""

    answers: Answers = field(default_factory=dict)
    note: str = ""


class QuestionPicker(ModalScreen[Picked | None]):
    """One question at a time; dismissed with the answers, or None (Esc)."""

    DEFAULT_CSS = """
    QuestionPicker { align: center middle; }
    QuestionPicker > Vertical {
        width: 96%; max-width: 110; height: auto; max-height: 96%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    QuestionPicker VerticalScroll { height: auto; max-height: 100%; scrollbar-size-vertical: 1; }
    QuestionPicker .footer { dock: bottom; height: auto; }
    QuestionPicker #picker-plan { margin: 0; padding: 0; }
    QuestionPicker .help { color: $text-muted; }
    QuestionPicker Input { margin: 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False, priority=True),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("enter", "choose", "Choose", priority=True),
        Binding("space", "tick", "Tick", show=False),
        Binding("escape", "back", "Dismiss", priority=True),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        *(Binding(str(n), f"pick({n - 1})", show=False) for n in range(1, 6)),
    ]

    def __init__(self, asking: Asking) -> None:
        super().__init__()
        self.asking = asking
        self.step = 0  # the question on screen
        self.selected = 0
        self.ticked: set[int] = set()
        self.picked = Picked()

    @property
    def question(self) -> Question:
        return self.asking.questions[self.step]

    def _lines(self) -> list[str]:
        """The options, then the free answer (a plan's "keep planning" is its free answer)."""
        labels = [o.label for o in self.question.options]
        return labels if self.asking.plan is not None else [*labels, OWN_ANSWER]

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll(id="picker-scroll"):
                if self.asking.plan is not None:
                    plan = AssistantMessage(self.asking.plan)
                    plan.id = "picker-plan"
                    yield plan
            with Vertical(classes="footer"):
                yield Static(self._question_text(), id="picker-question")
                yield Static(self._choices(), id="picker-choices")
                note = Input(id="picker-note", placeholder="")
                note.display = False
                yield note
                yield Static(self._help(), id="picker-help", classes="help")

    def _question_text(self) -> Text:
        q = self.question
        text = Text()
        if len(self.asking.questions) > 1:
            text.append(f"({self.step + 1}/{len(self.asking.questions)}) ", style="dim")
        text.append(f"[{visible(q.header)}] ", style="bold")
        text.append(visible(q.question), style="bold")
        return text

    def _choices(self) -> Text:
        text = Text()
        options = self.question.options
        for i, label in enumerate(self._lines()):
            mark = ""
            if self.question.multi_select and i < len(options):
                mark = "[x] " if i in self.ticked else "[ ] "
            line = f"{i + 1}. {mark}{visible(label)}"
            text.append(
                f" › {line} " if i == self.selected else f"   {line} ",
                style="reverse" if i == self.selected else "",
            )
            if i < len(options) and options[i].description:
                text.append(f"  {visible(options[i].description)}", style="dim")
            text.append("\n")
        return text

    def _help(self) -> Text:
        tick = "Space ticks, " if self.question.multi_select else ""
        return Text(f"↑↓ Enter or 1-{len(self._lines())}; {tick}Esc dismisses")

    def _redraw(self) -> None:
        self.query_one("#picker-question", Static).update(self._question_text())
        self.query_one("#picker-choices", Static).update(self._choices())
        self.query_one("#picker-help", Static).update(self._help())

    def _note(self) -> Input:
        return self.query_one("#picker-note", Input)

    def action_move(self, step: int) -> None:
        if not self._note().display:
            self.selected = (self.selected + step) % len(self._lines())
            self._redraw()

    def action_pick(self, index: int) -> None:
        if not self._note().display and index < len(self._lines()):
            self.selected = index
            self._redraw()
            self.action_choose()

    def action_tick(self) -> None:
        if self.question.multi_select and self.selected < len(self.question.options):
            self.ticked ^= {self.selected}
            self._redraw()

    def action_page(self, pages: int) -> None:
        scroll = self.query_one("#picker-scroll", VerticalScroll)
        step = max(1, scroll.scrollable_content_region.height - 1)
        scroll.scroll_to(y=scroll.scroll_y + pages * step, animate=False)

    def action_choose(self) -> None:
        note = self._note()
        if note.display:
            self._typed(note.value)
            return
        label = self._lines()[self.selected]
        if label in (OWN_ANSWER, KEEP_PLANNING):
            note.placeholder = "What should change? (Enter sends)" if self.asking.plan else ""
            note.display = True
            note.focus()
            return
        if self.question.multi_select:
            ticked = self.ticked or {self.selected}
            self._answer([self.question.options[i].label for i in sorted(ticked)])
        else:
            self._answer(label)

    def _typed(self, value: str) -> None:
        if self.asking.plan is not None:
            self.picked.note = value.strip()
            self._answer(KEEP_PLANNING)
        elif value.strip():
            self._answer(value.strip())

    def _answer(self, answer: str | list[str]) -> None:
        self.picked.answers[self.question.question] = answer
        if self.step + 1 >= len(self.asking.questions):
            self.dismiss(self.picked)
            return
        self.step, self.selected, self.ticked = self.step + 1, 0, set()
        self._redraw()

    def action_back(self) -> None:
        """Esc: out of the typed answer first, else dismiss the questions."""
        note = self._note()
        if note.display:
            note.display = False
            note.value = ""
            self.focus()
            return
        self.dismiss(None)
