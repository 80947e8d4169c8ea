"""Issue 40 item 3: `remember` keeps exactly `context.suggestions`, the rules the TUI's and the
editor's labels name (`keeps_label`), no more and no fewer (CONTRACT.md §8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peri_cli.sdk import Allow, Deny, PermissionContext, ResultEvent, keeps_label, query
from tests.fakeserver import FakeServer
from tests.sdk.conftest import options_for


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "Bash", "input": {"command": command}}]}


async def test_remember_keeps_exactly_the_suggestions_the_label_names(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script(
        [
            bash("echo hi; cat notes.txt"),
            bash("cat other.txt"),
            bash("wc -l notes.txt"),
            bash("wc -c notes.txt"),
            {"text": "done"},
        ]
    )
    asked: list[tuple[str, PermissionContext]] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        asked.append((tool_input["command"], ctx))
        if len(asked) == 1:
            return Allow(remember="session")
        return Deny("no", remember="project")

    options = options_for(server, tmp_path, can_use_tool=ask)
    events = [e async for e in query("look", options)]
    assert isinstance(events[-1], ResultEvent)
    commands = [c for c, _ in asked]
    # `cat other.txt` ran unasked (the label named Bash(cat:*)); the denied `wc` rule held
    assert commands == ["echo hi; cat notes.txt", "wc -l notes.txt"]
    first = asked[0][1]
    assert first.suggestions == ("Bash(echo:*)", "Bash(cat:*)")
    assert first.suggested_rule == "Bash(echo:*)"  # (kept: the first of them)
    label = keeps_label("session", first.suggestions)
    assert label == "Allow for this session (Bash(echo:*), Bash(cat:*))"
    local = json.loads((Path(options.cwd) / ".peri" / "settings.local.json").read_text())
    assert local["permissions"] == {"deny": ["Bash(wc:*)"]}  # exactly what was suggested
