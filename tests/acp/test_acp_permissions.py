"""session/request_permission: an Edit allowed, rejected, and allowed always (CONTRACT.md §9)."""

from __future__ import annotations

import json

from acp import text_block

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri

EDIT = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}


def _script(peri: Peri) -> None:
    peri.server.set_script([{"tool_calls": [{"name": "Edit", "input": EDIT}]}, {"text": "done"}])


def _tool_results(body: dict) -> list[dict]:
    return [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


async def test_an_allowed_edit_changes_the_file_and_shows_a_diff(
    peri: Peri, editor: Editor
) -> None:
    (peri.workspace / "a.txt").write_text("one\n")
    _script(peri)
    editor.answers = ["allow_once"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])
    assert answer.stop_reason == "end_turn"
    assert (peri.workspace / "a.txt").read_text() == "two\n"
    (asked,) = editor.asked
    ids = [o.option_id for o in asked["options"]]
    assert ids == ["allow_once", "allow_session", "allow_project", "reject_once", "reject_always"]
    kinds = [o.kind for o in asked["options"]]
    assert kinds == ["allow_once", "allow_always", "allow_always", "reject_once", "reject_always"]
    shown = asked["tool_call"].content[0]
    assert (shown.type, shown.old_text, shown.new_text) == ("diff", "one", "two")
    done = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    diff = done[0].content[0]
    assert diff.type == "diff" and diff.path == str(peri.workspace / "a.txt")
    assert (diff.old_text, diff.new_text) == ("one", "two")
    assert editor.of("tool_call")[0].kind == "edit"


async def test_a_rejected_edit_leaves_the_file_and_the_model_is_told(
    peri: Peri, editor: Editor
) -> None:
    (peri.workspace / "a.txt").write_text("one\n")
    _script(peri)
    editor.answers = ["reject_once"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])
    assert (peri.workspace / "a.txt").read_text() == "one\n"
    calls = [b for b in peri.model_calls() if b and "messages" in b]
    (result,) = _tool_results(calls[1])
    assert result["is_error"] is True
    assert [u.status for u in editor.of("tool_call_update")][-1] == "failed"


async def test_allow_always_keeps_a_rule_and_the_next_edit_is_not_asked(
    peri: Peri, editor: Editor
) -> None:
    (peri.workspace / "a.txt").write_text("one three\n")
    second = {**EDIT, "old_string": "three", "new_string": "four"}
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Edit", "input": EDIT}]},
            {"tool_calls": [{"name": "Edit", "input": second}]},
            {"text": "done"},
        ]
    )
    editor.answers = ["allow_project"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit twice")])
    assert len(editor.asked) == 1
    assert (peri.workspace / "a.txt").read_text() == "two four\n"
    local = json.loads((peri.workspace / ".peri" / "settings.local.json").read_text())
    assert any(r.startswith("Edit") for r in local["permissions"]["allow"])


async def test_reject_always_keeps_a_deny_rule_and_the_edit_never_runs(
    peri: Peri, editor: Editor
) -> None:
    (peri.workspace / "a.txt").write_text("one\n")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Edit", "input": EDIT}]},
            {"tool_calls": [{"name": "Edit", "input": EDIT}]},
            {"text": "done"},
        ]
    )
    editor.answers = ["reject_always"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit twice")])
    assert (peri.workspace / "a.txt").read_text() == "one\n"
    assert len(editor.asked) == 1  # the second Edit met the kept rule: not asked, not run
    # the file and key the TUI's rules live in (CONTRACT.md §9)
    local = json.loads((peri.workspace / ".peri" / "settings.local.json").read_text())
    deny = local["permissions"]["deny"]
    assert [r for r in deny if r.startswith("Edit")] and not local["permissions"].get("allow")
    calls = [b for b in peri.model_calls() if b and "messages" in b]
    for call, denied in ((calls[1], 1), (calls[2], 2)):
        results = _tool_results(call)
        assert len(results) == denied and all(r["is_error"] for r in results)
    assert [u.status for u in editor.of("tool_call_update")].count("completed") == 0


async def test_issue40_allow_for_this_session_names_every_rule_it_keeps(
    peri: Peri, editor: Editor
) -> None:
    """`echo hi; cat notes.txt` keeps `Bash(echo:*)` and `Bash(cat:*)`: every kept option's label
    names both, whole; after "for this session" `cat other.txt` runs unasked, as the label said,
    and `wc -l` still asks."""
    (peri.workspace / "notes.txt").write_text("n\n")
    (peri.workspace / "other.txt").write_text("o\n")
    long_name = "a-file-with-a-rather-long-name-so-that-the-exact-rule-passes-eighty-chars.txt"
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo hi; cat notes.txt"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": "cat other.txt"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": f"rm -f {long_name}"}}]},
            {"text": "done"},
        ]
    )
    editor.answers = ["allow_session", "reject_once"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("look")])
    first, last = editor.asked  # `cat other.txt` was not asked
    names = {o.option_id: o.name for o in first["options"]}
    assert names["allow_session"] == "Allow for this session (Bash(echo:*), Bash(cat:*))"
    assert names["allow_project"] == "Always allow in this project (Bash(echo:*), Bash(cat:*))"
    assert names["reject_always"] == "Always reject in this project (Bash(echo:*), Bash(cat:*))"
    assert last["tool_call"].raw_input["command"].startswith("rm -f")
    rule = f"Bash(rm -f {long_name})"
    assert len(rule) > 80
    names = {o.option_id: o.name for o in last["options"]}
    assert names["allow_session"] == f"Allow for this session ({rule})"  # whole, never cut
    calls = [b for b in peri.model_calls() if b and "messages" in b]
    ran = _tool_results(calls[2])[-1]  # `cat other.txt`'s result
    assert not ran.get("is_error") and "o" in str(ran["content"])
