"""A sandboxed command's new domain over ACP: the question arrives as `session/request_permission`
with the domain, offering once, always (the TUI's default: the local settings) and reject."""

from __future__ import annotations

import json
import shutil

import pytest
from acp import text_block

from peri_cli.sandbox.probe import probe
from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri
from tests.e2e.test_sandbox_e2e import sandboxed
from tests.sandbox.pages import PAGE

pytestmark = [
    pytest.mark.skipif(not probe().available, reason=probe().why_not),
    pytest.mark.skipif(shutil.which("socat") is None, reason="socat is not installed"),
]


async def test_a_network_question_is_a_permission_request(
    peri: Peri, editor: Editor, page_port: int
) -> None:
    sandboxed(peri)
    command = f"curl -s --max-time 20 http://localhost:{page_port}/"
    peri.server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "done"}]
    )
    editor.answers = ["allow_project"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("fetch")])
    assert answer.stop_reason == "end_turn"
    (asked,) = editor.asked  # the sandboxed Bash itself runs without asking
    assert asked["tool_call"].raw_input == {"domain": "localhost"}
    assert asked["tool_call"].tool_call_id  # (an id of its own: it belongs to no call)
    options = [(o.option_id, o.kind) for o in asked["options"]]
    assert options == [
        ("allow_once", "allow_once"),
        ("allow_project", "allow_always"),
        ("reject_once", "reject_once"),
    ]
    assert "localhost" in asked["options"][1].name
    sent = json.dumps(peri.model_calls()[-1]["messages"])
    assert PAGE.decode().strip() in sent, sent
    local = json.loads((peri.workspace / ".peri" / "settings.local.json").read_text())
    assert local["sandbox"]["network"]["allowedDomains"] == ["localhost"]
