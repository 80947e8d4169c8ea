"""Issue 40 item 6 over ACP: a PreToolUse hook's `"continue": false` ends the prompt and the
editor is shown its `stopReason`; the next prompt of the session runs."""

from __future__ import annotations

import json

from acp import text_block

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri

STOP = '{"continue": false, "stopReason": "tests are red: fix them first"}'


async def test_a_pre_tool_use_stop_is_shown_to_the_editor(peri: Peri, editor: Editor) -> None:
    script = peri.home / "stop.sh"
    script.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{STOP}'\n")
    script.chmod(0o755)
    (peri.home / ".peri").mkdir(parents=True, exist_ok=True)
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(script)}]}]
    }
    (peri.home / ".peri" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    bash = {"name": "Bash", "input": {"command": "touch made.txt"}}
    peri.server.set_script([{"tool_calls": [bash]}, {"text": "second prompt answered"}])
    editor.answers = ["allow_once"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        assert "tests are red: fix them first" in editor.text()
        second = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    assert not (peri.workspace / "made.txt").exists()
    assert "second prompt answered" in editor.text()
