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


async def test_bash_output_streams_while_the_command_runs(peri: Peri, editor: Editor) -> None:
    command = "echo first-part; sleep 1.5; echo second-part"
    peri.server.set_script(
        [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "ran"}]
    )
    async with running(peri, editor, "--permission-mode", "bypass") as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("run")])
    assert answer.stop_reason == "end_turn"
    (start,) = editor.of("tool_call")
    updates = [u for u in editor.of("tool_call_update") if u.tool_call_id == start.tool_call_id]
    texts = [(u.status, u.content[0].content.text) for u in updates if u.content]
    live = [text for status, text in texts if status is None]
    assert any("first-part" in t and "second-part" not in t for t in live), texts
    assert texts[-1][0] == "completed" and "second-part" in texts[-1][1]


def _agent(prompt: str, description: str) -> dict[str, object]:
    return {"name": "Agent", "input": {"prompt": prompt, "description": description}}


async def test_each_subagents_progress_goes_to_its_own_agent_call(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {
                "when": "orchestrate",
                "tool_calls": [_agent("job one", "first job"), _agent("job two", "second job")],
            },
            {"when": "job one", "tool_calls": [{"name": "Glob", "input": {"pattern": "one-*"}}]},
            {"when": "job two", "tool_calls": [{"name": "Glob", "input": {"pattern": "two-*"}}]},
            {"when": "job one", "text": "report one", "delay": 0.05},
            {"when": "job two", "text": "report two", "delay": 0.05},
            {"when": "orchestrate", "text": "both done"},
        ]
    )
    async with running(peri, editor, "--permission-mode", "bypass") as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        prompt = [text_block("orchestrate")]
        answer = await conn.prompt(session_id=session.session_id, prompt=prompt)
    assert answer.stop_reason == "end_turn"
    ids = {u.title: u.tool_call_id for u in editor.of("tool_call")}
    one, two = ids["Agent: first job"], ids["Agent: second job"]

    def shown(call: str) -> str:
        return "\n".join(
            c.content.text
            for u in editor.of("tool_call_update")
            if u.tool_call_id == call and u.status is None
            for c in u.content or []
        )

    assert 'Glob "one-*"' in shown(one) and "two-*" not in shown(one)
    assert 'Glob "two-*"' in shown(two) and "one-*" not in shown(two)
