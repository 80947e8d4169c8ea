"""Cancel mid-stream, load a `peri -p` session, the editor's files, the model option."""

from __future__ import annotations

import asyncio
import time

from acp import text_block
from acp.schema import SessionConfigOptionSelect

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri
from tests.fakeserver import DEFAULT_MODELS

LONG = " ".join(f"word{i}" for i in range(200))


async def _first(editor: Editor, kind: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while kind not in editor.kinds():
        assert time.monotonic() < deadline, f"no {kind} arrived"
        await asyncio.sleep(0.01)


async def test_cancel_mid_stream_answers_cancelled_and_the_session_resumes(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script([{"text": LONG, "delay": 0.05}])
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        sid = session.session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await _first(editor, "agent_message_chunk")
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        answer = await asyncio.wait_for(prompt, 5)
        elapsed = time.monotonic() - started
    assert answer.stop_reason == "cancelled"
    assert elapsed < 1.0
    assert len(editor.text().split()) < 200
    peri.server.set_script([{"text": "resumed fine"}])
    done = peri.run("-r", sid, "-p", "carry on", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert '"resumed fine"' in done.stdout and sid in done.stdout


async def test_load_replays_a_session_written_by_peri_p(peri: Peri, editor: Editor) -> None:
    (peri.workspace / "notes.txt").write_text("the notes\n")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
            {"text": "I read the notes."},
        ]
    )
    written = peri.json("-p", "what do the notes say?")
    sid = written["session_id"]
    async with running(peri, editor) as conn:
        await conn.load_session(cwd=str(peri.workspace), session_id=sid, mcp_servers=[])
        replayed = list(editor.kinds())
        peri.server.set_script([{"text": "still here"}])
        answer = await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
    assert answer.stop_reason == "end_turn"
    user = [u.content.text for u in editor.of("user_message_chunk")]
    assert user == ["what do the notes say?"]
    assert replayed[0] == "user_message_chunk"
    (call,) = editor.of("tool_call")
    assert call.kind == "read"
    final = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert final[0].tool_call_id == call.tool_call_id
    assert "the notes" in final[0].content[0].content.text
    assert editor.text() == "I read the notes.still here"
    assert "still here" in peri.transcript(sid).read_text()


async def test_a_client_with_fs_gets_the_edit_and_the_disk_waits_for_it(
    peri: Peri, editor: Editor
) -> None:
    target = peri.workspace / "a.txt"
    target.write_text("one\n")
    buffer = peri.workspace / "b.txt"
    buffer.write_text("saved text\n")
    editor.buffers[str(buffer)] = "unsaved buffer text\n"
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "b.txt"}}]},
            {
                "tool_calls": [
                    {
                        "name": "Edit",
                        "input": {"file_path": "a.txt", "old_string": "one", "new_string": "two"},
                    }
                ]
            },
            {"text": "done"},
        ]
    )
    editor.answers = ["allow_once"]
    editor.write_gate = asyncio.Event()
    async with running(peri, editor, fs=True) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        prompt = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])
        )
        await asyncio.wait_for(editor.write_started.wait(), 30)
        assert target.read_text() == "one\n"  # only the editor writes it
        editor.write_gate.set()
        await asyncio.wait_for(prompt, 30)
    assert editor.writes == [(str(target), "two\n")]
    assert target.read_text() == "two\n"
    read = next(u for u in editor.of("tool_call_update") if u.status == "completed")
    assert "unsaved buffer text" in read.content[0].content.text


async def test_the_model_option_lists_the_models_and_switching_changes_the_next_request(
    peri: Peri, editor: Editor
) -> None:
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        # answered before the provider's list arrives: the current model, then the list
        (option,) = session.config_options or []
        assert isinstance(option, SessionConfigOptionSelect)
        assert (option.id, option.category) == ("model", "model")
        assert [o.value for o in option.options] == [option.current_value]
        await _first(editor, "config_option_update")
        (listed,) = editor.of("config_option_update")[0].config_options
        assert listed.current_value == option.current_value
        assert set(DEFAULT_MODELS) <= {o.value for o in listed.options}
        changed = await conn.set_config_option(
            config_id="model", session_id=session.session_id, value="claude-opus-4-5-20251101"
        )
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    current = [o.current_value for o in changed.config_options]
    assert current == ["claude-opus-4-5-20251101"]
    assert editor.kinds().count("config_option_update") == 2  # the list, then the switch
    calls = [b for b in peri.model_calls() if b and "messages" in b]
    assert calls[-1]["model"] == "claude-opus-4-5-20251101"


async def test_modes_switch_and_bypass_needs_the_flag(peri: Peri, editor: Editor) -> None:
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        ids = [m.id for m in session.modes.available_modes]
        assert ids == ["default", "accept-edits", "plan"]
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
    assert [u.current_mode_id for u in editor.of("current_mode_update")] == ["plan"]
    async with running(peri, Editor(), "--permission-mode", "bypass") as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        assert "bypass" in [m.id for m in session.modes.available_modes]
