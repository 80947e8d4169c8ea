"""Custom commands through the SDK (issue 39): a program's `can_use_tool` is asked about each
`!` line as the Bash call it is, with the command exactly as it will run; `commands()` lists
them by the name that reaches each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peri_cli.sdk import Allow, Deny, PeriClient, PermissionContext, query
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for


def command(root: Path, rel: str, text: str) -> None:
    path = root / ".claude" / "commands" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def last_user_text(server: FakeServer) -> str:
    body = model_calls(server)[-1]
    message = [m for m in body["messages"] if m["role"] == "user"][-1]
    return "".join(b.get("text", "") for b in message["content"] if isinstance(b, dict))


async def test_each_bang_line_is_asked_about_exactly_as_it_will_run(
    server: FakeServer, tmp_path: Path
) -> None:
    command(
        tmp_path / "home",
        "log.md",
        "Recent: !`echo log -n $1`\nWhere: !`echo $ARGUMENTS; pwd`\nAsked: $1\n",
    )
    asked: list[tuple[str, dict[str, Any], str]] = []

    async def can_use_tool(
        name: str, tool_input: dict[str, Any], context: PermissionContext
    ) -> Allow | Deny:
        asked.append((name, tool_input, context.tool_use_id))
        return Deny("no pwd here") if "pwd" in tool_input["command"] else Allow()

    server.set_script([{"text": "ok"}])
    options = options_for(server, tmp_path, can_use_tool=can_use_tool)
    events = [e async for e in query("/log 3 --all", options)]
    assert not events[-1].is_error  # type: ignore[attr-defined]
    assert [(n, i["command"]) for n, i, _ in asked] == [
        ("Bash", "echo log -n 3"),
        ("Bash", "echo 3 --all; pwd"),
    ]
    assert last_user_text(server) == (
        "Recent: log -n 3\nWhere: [not run: denied: no pwd here]\nAsked: 3\n"
    )
    used = {e.id for e in events if e.type == "tool_use"}  # type: ignore[attr-defined]
    assert used == {tool_use_id for _, _, tool_use_id in asked}  # each shown with its call


async def test_commands_lists_custom_commands_by_the_name_that_reaches_them(
    server: FakeServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    command(ws, "review.md", "---\ndescription: Project review\nargument-hint: [pr]\n---\nR\n")
    command(tmp_path / "home", "review.md", "---\ndescription: Mine\n---\nM\n")
    async with PeriClient(options_for(server, tmp_path)) as client:
        listed = {name: (about, hint) for name, about, hint in client.commands()}
    assert listed["review"] == ("Project review (project)", "[pr]")
    assert listed["user:review"] == ("Mine (user)", "")
