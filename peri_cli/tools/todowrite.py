"""TodoWrite: the session's task list, Claude Code's schema. The list lives only in the call and
its result (the transcript); Peri reads the latest one from there (`context/todos.py`) for the
task list the faces show and for the working state after a compaction."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peri_cli.base.tool import (
    PydanticTool,
    ToolContext,
    ToolError,
    ToolKind,
    ToolOutput,
    ToolTraits,
)
from peri_cli.context.todos import MAX_TODO_CHARS, MAX_TODOS, TODO_TOOL, TodoParams, todo_lines

MAX_PROBLEMS = 3  # a 10,000-item list with one bad field each says so in a few lines


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class TodoWriteTool(PydanticTool[TodoParams]):
    name = TODO_TOOL
    kind: ToolKind = "read"  # changes no file and runs nothing: no mode or rule asks about it
    params = TodoParams
    traits = ToolTraits(card_arg="todos", editor_kind="think")

    def description(self) -> str:
        return _description()

    def validate(self, raw: dict[str, Any]) -> TodoParams:
        """The input, or a short error naming the first problems and the caps."""
        try:
            return TodoParams.model_validate(raw)
        except ValidationError as e:
            errors = e.errors(include_url=False)
            problems = [
                f"{'.'.join(str(x) for x in err['loc']) or 'input'}: {err['msg']}"
                for err in errors[:MAX_PROBLEMS]
            ]
            more = len(errors) - MAX_PROBLEMS
            if more > 0:
                problems.append(f"and {more} more problem{'s' if more > 1 else ''}")
            raise ToolError(
                f"Invalid input for {self.name}: {'; '.join(problems)}. Send the whole list as "
                f"`todos`: a list of at most {MAX_TODOS} items, each {{content, status: pending "
                f"| in_progress | completed, activeForm}}, texts at most {MAX_TODO_CHARS} "
                "characters."
            ) from e

    async def call(self, params: TodoParams, ctx: ToolContext) -> ToolOutput:
        lines = todo_lines(params.todos) or ["(the list is empty)"]
        text = "The task list is updated:\n" + "\n".join(lines)
        if sum(t.status == "in_progress" for t in params.todos) > 1:
            text += "\nKeep one task in_progress at a time: finish it before starting the next."
        return ToolOutput.text(
            text + "\nKeep it current as you work: mark each task completed as soon as it is done."
        )
