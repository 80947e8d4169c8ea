"""An Edit that cannot apply is not put to the user (issue 42): its error goes straight back
to the model. Where the file could not be read unasked, it is asked about as before, so the
error's lines from the file never reach the model unapproved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peri_cli.sdk import Allow, Deny, PermissionContext, ResultEvent, query
from tests.fakeserver import FakeServer
from tests.sdk.conftest import model_calls, options_for, sent_text


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "ws" / "notes.txt").write_text("alpha\nbeta\n")
    return tmp_path / "ws"


def edit(path: str, old: str) -> dict[str, Any]:
    return {"name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": "y"}}


async def run(server: FakeServer, tmp_path: Path, call: dict[str, Any]) -> list[str]:
    asked: list[str] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        asked.append(name)
        return Deny("no")

    server.set_script([{"tool_calls": [call]}, {"text": "noted"}])
    events = [e async for e in query("edit it", options_for(server, tmp_path, can_use_tool=ask))]
    assert isinstance(events[-1], ResultEvent) and not events[-1].is_error
    return asked


async def test_an_edit_whose_old_string_is_missing_fails_unasked(
    server: FakeServer, tmp_path: Path
) -> None:
    workspace(tmp_path)
    asked = await run(server, tmp_path, edit("notes.txt", "gamma"))
    assert asked == []  # nobody was asked about an edit that could not apply
    sent = sent_text(model_calls(server)[-1])
    assert "old_string" in sent and "not found" in sent.lower()
    assert (tmp_path / "ws" / "notes.txt").read_text() == "alpha\nbeta\n"


async def test_an_edit_that_would_apply_is_still_asked(server: FakeServer, tmp_path: Path) -> None:
    workspace(tmp_path)
    assert await run(server, tmp_path, edit("notes.txt", "beta")) == ["Edit"]
    assert (tmp_path / "ws" / "notes.txt").read_text() == "alpha\nbeta\n"  # denied


async def test_outside_the_workspace_the_file_is_not_read_before_the_question(
    server: FakeServer, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("SECRET-LINE-ONE\n")
    assert await run(server, tmp_path, edit(str(secret), "SECRET-LINE")) == ["Edit"]
    assert "SECRET-LINE-ONE" not in sent_text(model_calls(server)[-1])
