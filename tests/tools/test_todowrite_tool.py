"""TodoWrite: Claude Code's schema, caps that say themselves, errors that the model can act on."""

from __future__ import annotations

from typing import Any

import pytest

from peri_cli.base.tool import ToolContext, ToolError
from peri_cli.context.todos import MAX_TODO_CHARS, MAX_TODOS
from peri_cli.tools import builtin_tools
from peri_cli.tools.todowrite import TodoWriteTool

ITEM = {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"}


def error_of(raw: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as caught:
        TodoWriteTool().validate(raw)
    return str(caught.value)


def test_the_schema_is_claude_codes() -> None:
    schema = TodoWriteTool().spec().input_schema
    assert schema["required"] == ["todos"]
    item = schema["$defs"]["TodoItem"]
    assert set(item["properties"]) == {"content", "status", "activeForm"}
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert "TodoWrite" in [t.name for t in builtin_tools()]


async def test_a_list_is_taken_and_said_back(ctx: ToolContext) -> None:
    todos = [ITEM, {**ITEM, "content": "Ship", "status": "pending", "activeForm": "Shipping"}]
    out = await TodoWriteTool().call(TodoWriteTool().validate({"todos": todos}), ctx)
    assert not out.is_error
    text = out.content[0].text  # type: ignore[union-attr]
    assert "[~] Run the tests" in text and "[ ] Ship" in text


def test_a_list_sent_as_json_text_is_read() -> None:
    params = TodoWriteTool().validate(
        {"todos": '[{"content": "a", "status": "pending", "activeForm": "doing a"}]'}
    )
    assert params.todos[0].content == "a"


def test_many_bad_items_say_the_first_few() -> None:
    message = error_of({"todos": [{**ITEM, "status": "done"}] * 50})
    assert message.count("status") <= 4 and "and 47 more problems" in message
    assert len(message) < 1_000


def test_not_a_list() -> None:
    message = error_of({"todos": {"content": "x"}})
    assert message.startswith("Invalid input for TodoWrite: todos:") and "list" in message


def test_unknown_status() -> None:
    message = error_of({"todos": [{**ITEM, "status": "blocked"}]})
    assert "todos.0.status" in message and "'pending', 'in_progress' or 'completed'" in message


def test_ten_thousand_items_are_refused_in_one_short_message() -> None:
    message = error_of({"todos": [{**ITEM, "status": "done"}] * 10_000})
    assert (
        f"todos: List should have at most {MAX_TODOS} items after validation, not 10000" in message
    )
    assert len(message) < 1_000


def test_huge_strings_are_refused() -> None:
    message = error_of({"todos": [{**ITEM, "content": "x" * 1_000_000}]})
    assert f"todos.0.content: String should have at most {MAX_TODO_CHARS} characters" in message
    assert len(message) < 1_000


async def test_two_in_progress_is_allowed_but_said(ctx: ToolContext) -> None:
    tool = TodoWriteTool()
    out = await tool.call(tool.validate({"todos": [ITEM, {**ITEM, "content": "Other"}]}), ctx)
    text = out.content[0].text  # type: ignore[union-attr]
    assert not out.is_error and "one task in_progress at a time" in text


def test_it_changes_nothing_on_disk(ctx: ToolContext) -> None:
    tool = TodoWriteTool()
    params = tool.validate({"todos": [ITEM]})
    assert not tool.writes(params, ctx) and tool.kind == "read"
