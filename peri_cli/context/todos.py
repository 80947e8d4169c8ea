"""The session's task list: `TodoWrite`'s input (Claude Code's schema, with caps), and the latest
list as the transcript holds it (the newest successful call, or what a working state carried)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from peri_cli.session.transcript import MessageEntry

TODO_TOOL = "TodoWrite"
MAX_TODOS = 100  # a plan longer than this is not a plan the model can keep in view
MAX_TODO_CHARS = 500  # per `content` and per `activeForm`
TODOS_KEY = "todos"  # on a working-state entry: the list it carried

TodoStatus = Literal["pending", "in_progress", "completed"]
MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    content: str = Field(
        min_length=1,
        max_length=MAX_TODO_CHARS,
        description="The task, imperative (e.g. 'Run the tests').",
    )
    status: TodoStatus = Field(description="pending, in_progress or completed.")
    activeForm: str = Field(
        min_length=1,
        max_length=MAX_TODO_CHARS,
        description="The task as it is being done (e.g. 'Running the tests'), shown while "
        "it is in progress.",
    )


class TodoParams(BaseModel):
    todos: list[TodoItem] = Field(
        max_length=MAX_TODOS,
        description=f"The whole updated task list (at most {MAX_TODOS} items); it replaces "
        "the previous one.",
    )

    @field_validator("todos", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        """Some models send the list as JSON text: read it as the list it spells."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value


def parse_todos(raw: object) -> list[TodoItem] | None:
    """A stored list (a call's input or a carried one) as items; None if it is not valid."""
    try:
        return TodoParams.model_validate({"todos": raw}).todos
    except ValueError:
        return None


def latest_todos(entries: Sequence[MessageEntry]) -> list[TodoItem] | None:
    """The newest task list in these entries: the input of the newest `TodoWrite` call that
    succeeded, or the list a working state carried; None when there is none."""
    ok: set[str] = set()
    for e in entries:
        ok.update(r.tool_use_id for r in e.message.tool_results if not r.is_error)
    for e in reversed(entries):
        carried = (e.model_extra or {}).get(TODOS_KEY)
        if carried is not None:
            return parse_todos(carried)
        for use in reversed(e.message.tool_uses):
            if use.name == TODO_TOOL and use.id in ok:
                todos = parse_todos(use.input.get("todos"))
                if todos is not None:
                    return todos
    return None


def todo_lines(todos: Sequence[TodoItem]) -> list[str]:
    """One line per task, its status as a mark: `[ ]` pending, `[~]` in progress, `[x]` done."""
    return [f"{MARKS[t.status]} {t.content}" for t in todos]


def dump_todos(todos: Sequence[TodoItem]) -> list[dict[str, str]]:
    return [t.model_dump() for t in todos]
