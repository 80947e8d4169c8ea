"""The task list above the prompt: the task in progress as its live line (its `activeForm`), then a
compact checklist, folded to a few rows around that task when the list is long (`/todos` shows it
whole). Hidden while there is no list, or once every task is done. It only draws: the bridge gives
it the latest list (`show`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widget import Widget

from peri_cli.tui.format import one_line, plain

if TYPE_CHECKING:
    from peri_cli.context.todos import TodoItem

VISIBLE_ROWS = 5
MARKS = {"completed": "☒", "in_progress": "▸", "pending": "☐"}
STYLES = {"completed": "dim strike", "in_progress": "bold", "pending": ""}


def todo_rows(todos: Sequence[TodoItem], width: int = 100) -> list[Content]:
    """One row per task: its mark and its text, made visible and cut to one line."""
    return [
        Content.assemble(f"{MARKS[t.status]} ", plain(one_line(t.content, width), STYLES[t.status]))
        for t in todos
    ]


def fold(todos: Sequence[TodoItem], rows: int = VISIBLE_ROWS) -> tuple[int, int]:
    """Which tasks a folded list shows (first, end): a window starting one before the first task
    not done, so what is next stays in view."""
    if len(todos) <= rows:
        return 0, len(todos)
    open_at = next((i for i, t in enumerate(todos) if t.status != "completed"), len(todos) - 1)
    first = min(max(0, open_at - 1), len(todos) - rows)
    return first, first + rows


class TodoStrip(Widget):
    DEFAULT_CSS = """
    TodoStrip {
        height: auto;
        max-height: 8;
        margin: 0 1;
        padding: 0 1;
        border-left: outer $success 40%;
    }
    """

    def __init__(self, *, id: str | None = None, whole: str = " · /todos") -> None:
        super().__init__(id=id)
        self.todos: list[TodoItem] = []
        self.whole = whole  # where the folded rows are (a SubAgent's pane has no /todos)
        self.display = False

    def show(self, todos: Sequence[TodoItem] | None) -> None:
        self.todos = list(todos or [])
        self.display = any(t.status != "completed" for t in self.todos)
        self.refresh(layout=True)

    def render(self) -> Content:
        width = max(20, (self.content_region.width or 80) - 2)
        done = sum(t.status == "completed" for t in self.todos)
        active = next((t for t in self.todos if t.status == "in_progress"), None)
        live = plain(one_line(active.activeForm, width), "bold") if active else Content("Tasks")
        head = Content.assemble(live, (f"  {done}/{len(self.todos)} done", "dim"))
        first, end = fold(self.todos)
        lines = [head, *todo_rows(self.todos[first:end], width)]
        if first or end < len(self.todos):
            more = f"{first} done above, " if first else ""
            lines.append(Content.styled(f"{more}{len(self.todos) - end} more{self.whole}", "dim"))
        return Content("\n").join(line.truncate(width, ellipsis=True) for line in lines)
