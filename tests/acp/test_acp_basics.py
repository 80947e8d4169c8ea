"""initialize, session/new, and a prompt whose model reads a file (CONTRACT.md §9)."""

from __future__ import annotations

from acp import PROTOCOL_VERSION, text_block

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri


async def test_initialize_says_what_peri_offers(peri: Peri, editor: Editor) -> None:
    async with running(peri, editor) as conn:
        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert answer.protocol_version == 1
    caps = answer.agent_capabilities
    assert caps is not None and caps.load_session is True
    assert caps.prompt_capabilities is not None
    assert caps.prompt_capabilities.image and caps.prompt_capabilities.embedded_context
    assert caps.mcp_capabilities is not None and caps.mcp_capabilities.http
    assert answer.agent_info is not None and answer.agent_info.name == "peri"
    names = [v.name for m in answer.auth_methods or [] for v in getattr(m, "vars", [])]
    assert "ANTHROPIC_API_KEY" in names


async def test_a_read_streams_a_tool_call_and_the_reply(peri: Peri, editor: Editor) -> None:
    (peri.workspace / "notes.txt").write_text("hello from the notes\n")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
            {"text": "The notes say hello."},
        ]
    )
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("read it")])
    assert answer.stop_reason == "end_turn"
    assert peri.transcript(session.session_id).exists()  # the shared store, the same id
    (start,) = editor.of("tool_call")
    assert start.kind == "read" and start.title == "Read notes.txt"
    assert start.locations[0].path == str(peri.workspace / "notes.txt")
    assert start.raw_input == {"file_path": "notes.txt"}
    final = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert final and final[0].tool_call_id == start.tool_call_id
    assert "hello from the notes" in final[0].content[0].content.text
    assert editor.text() == "The notes say hello."
    kinds = editor.kinds()
    assert kinds.index("tool_call") < kinds.index("agent_message_chunk")
    assert "available_commands_update" in kinds
    (commands,) = editor.of("available_commands_update")
    assert {"compact", "clear"} <= {c.name for c in commands.available_commands}


async def test_clear_and_compact_sent_as_prompts_act_as_in_the_tui(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"text": "Noted: the code word is heron."},
            {"text": "Summary: the user gave the code word heron."},
            {"text": "Noted: the code word is wren."},
            {"text": "A fresh start."},
        ]
    )
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("the code word is heron")])
        compacted = await conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        await conn.prompt(session_id=sid, prompt=[text_block("the code word is wren")])
        cleared = await conn.prompt(session_id=sid, prompt=[text_block("/clear")])
        await conn.prompt(session_id=sid, prompt=[text_block("what now?")])
    assert compacted.stop_reason == "end_turn" and cleared.stop_reason == "end_turn"
    calls = [str(body) for body in peri.model_calls() if body]  # not the model list GET
    assert len(calls) == 4  # /clear asks no model; /compact asks for one summary
    assert "heron" in calls[1] and "wren" not in calls[1]  # the summary request
    assert "Summary: the user gave the code word heron." in calls[2]  # after /compact
    assert "wren" not in calls[3] and "heron" not in calls[3]  # after /clear: a fresh view
    assert "what now?" in calls[3]
