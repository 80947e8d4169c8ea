"""What a session starts with: an untrusted folder says so first; the editor's own MCP servers
(a real stdio one, `mcp-server-time`, and the in-repo streamable-HTTP one) run for the session."""

from __future__ import annotations

import json
import sys

from acp import text_block
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri
from tests.e2e.test_mcp_e2e import execute, tool_results
from tests.mcp.helpers import SERVERS, TIME_SERVER, http_server


async def test_an_untrusted_folder_says_so_in_the_first_message(peri: Peri, editor: Editor) -> None:
    settings = peri.workspace / ".peri" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permission_mode": "bypass"}))
    peri.server.set_script([{"text": "first answer"}, {"text": "second answer"}])
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        sid = session.session_id
        assert session.modes is not None and session.modes.current_mode_id == "default"
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        first = editor.of("agent_message_chunk")[0].content.text
        editor.clear()
        await conn.prompt(session_id=sid, prompt=[text_block("again")])
    assert first.startswith("> Peri: workspace not trusted")
    assert 'permission_mode "bypass" (from .peri/settings.json)' in first
    assert editor.text() == "second answer"  # said once, on the first prompt


async def test_the_editors_mcp_servers_run_for_the_session(peri: Peri, editor: Editor) -> None:
    peri.server.set_script(
        [
            execute("mcp__clock__get_current_time", {"timezone": "Asia/Tokyo"}),
            execute("mcp__web__secret_header", {}),
            {"text": "both answered"},
        ]
    )
    editor.answers = [
        "allow_once",
        "allow_once",
    ]  # a call to a server's tool is asked, as in the TUI
    with http_server() as url:
        servers = [
            McpServerStdio(
                name="clock",
                command=str(TIME_SERVER),
                args=["--local-timezone", "UTC"],
                env=[EnvVariable(name="TZ", value="UTC")],
            ),
            HttpMcpServer(
                type="http",
                name="web",
                url=url,
                headers=[HttpHeader(name="X-Peri-Test", value="tok-from-the-editor")],
            ),
        ]
        async with running(peri, editor) as conn:  # they start unasked: the editor's own
            session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=servers)
            prompt = [text_block("what time is it in Tokyo")]
            answer = await conn.prompt(session_id=session.session_id, prompt=prompt)
    assert answer.stop_reason == "end_turn"
    asked = [q["tool_call"].title for q in editor.asked]
    assert [t.split(" ")[0] for t in asked] == [
        "mcp__clock__get_current_time",
        "mcp__web__secret_header",
    ]
    results = tool_results(peri.model_calls()[-1])
    assert any("Asia/Tokyo" in r and "datetime" in r for r in results), results
    assert any("tok-from-the-editor" in r for r in results), results
    # (the prompt waited for the editor's servers that were still starting, and said so)
    assert editor.text().endswith("both answered")


async def test_a_slow_server_the_editor_passed_is_waited_for_by_the_first_prompt(
    peri: Peri, editor: Editor
) -> None:
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "mcp__slow__echo", "input": {"text": "hi"}}]},
            {"text": "echoed"},
        ]
    )
    slow = McpServerStdio(
        name="slow", command=sys.executable, args=[str(SERVERS / "slow_server.py"), "2"], env=[]
    )
    async with running(peri, editor, "--permission-mode", "bypass") as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[slow])
        prompt = [text_block("echo through the slow server")]
        answer = await conn.prompt(session_id=session.session_id, prompt=prompt)
    assert answer.stop_reason == "end_turn"
    results = tool_results(peri.model_calls()[-1])
    assert any("slow server says hi" in r for r in results), results
    assert "Waiting for MCP server 'slow' still starting" in editor.text()
    done = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert done and "slow server says hi" in done[0].raw_output["output"]
