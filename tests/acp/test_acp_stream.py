"""What a running prompt streams beyond text: why it stopped, a running Bash's output, and
each SubAgent's progress on the Agent call that started it."""

from __future__ import annotations

import pytest
from acp import text_block

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri


@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "end_turn"])
async def test_the_stop_reason_is_the_models(peri: Peri, editor: Editor, stop: str) -> None:
    peri.server.set_script([{"text": "cut short here", "stop_reason": stop}])
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    assert answer.stop_reason == stop
    assert editor.text() == "cut short here"
