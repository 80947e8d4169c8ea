"""The task list through the door: a typed `TodoEvent` after each TodoWrite that set a list, its
`to_json()` the `stream-json` line, and the same list again in a session's replay."""

from __future__ import annotations

import json
from pathlib import Path

from peri_cli.sdk import PeriClient, TodoEvent, ToolResultEvent, parse_event, query
from tests.fakeserver import FakeServer
from tests.sdk.conftest import options_for

TODOS = [{"content": "Ship it", "status": "pending", "activeForm": "Shipping it"}]


async def test_todo_write_gives_a_typed_event(server: FakeServer, tmp_path: Path) -> None:
    server.set_script(
        [{"tool_calls": [{"name": "TodoWrite", "input": {"todos": TODOS}}]}, {"text": "ok"}]
    )
    events = [e async for e in query("plan", options_for(server, tmp_path))]
    kinds = [type(e).__name__ for e in events]
    (todo,) = [e for e in events if isinstance(e, TodoEvent)]
    assert kinds.index("TodoEvent") == kinds.index("ToolResultEvent") + 1
    assert todo.todos == TODOS and todo.agent_id is None
    assert json.loads(todo.to_json()) == {"type": "todo", "todos": TODOS}
    assert parse_event(todo.to_json()) == todo
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert not result.is_error

    async with PeriClient(options_for(server, tmp_path, resume=events[-1].session_id)) as client:
        replayed = [e for e in client.history() if isinstance(e, TodoEvent)]
    assert [e.todos for e in replayed] == [TODOS]
