"""ACP details an editor relies on (issue 40, item 5): the version answered, `rawOutput` as an
object, the `tool_call` before its permission question, errors with a `data.reason`, and a
malformed `session/cancel` logged in one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.acp.conftest import Editor, running
from tests.e2e.conftest import Peri


class OrderedEditor(Editor):
    """Notes, at each permission question, which tool calls the editor had been shown."""

    shown_when_asked: list[tuple[str, list[str]]]

    def __init__(self) -> None:
        super().__init__()
        self.shown_when_asked = []

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        shown = [u.tool_call_id for u in self.of("tool_call")]
        self.shown_when_asked.append((tool_call.tool_call_id, shown))
        return await super().request_permission(session_id, tool_call, options, **kwargs)


@pytest.mark.parametrize("version", [0, 7])
async def test_a_version_peri_does_not_speak_is_answered_with_its_latest(
    peri: Peri, editor: Editor, version: int
) -> None:
    async with running(peri, editor) as conn:
        answer = await conn.initialize(protocol_version=version)
    assert answer.protocol_version == 1


async def test_raw_output_is_an_object_and_the_call_is_shown_before_its_question(
    peri: Peri,
) -> None:
    editor = OrderedEditor()
    (peri.workspace / "a.txt").write_text("one\n")
    edit = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
            {"tool_calls": [{"name": "Edit", "input": edit}]},
            {"text": "done"},
        ]
    )
    editor.answers = ["allow_once"]
    async with running(peri, editor) as conn:
        session = await conn.new_session(cwd=str(peri.workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])
    (asked_id, shown), *_ = editor.shown_when_asked
    assert asked_id in shown  # the editor knew the call when it was asked about it
    starts = [u.tool_call_id for u in editor.of("tool_call")]
    assert len(starts) == len(set(starts)) == 2  # each call started once, the asked one too
    done = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert len(done) == 2
    for update in done:
        assert isinstance(update.raw_output, dict), update.raw_output
    read, edited = (u.raw_output for u in done)
    assert "one" in read["output"] and read["is_error"] is False
    assert isinstance(edited["output"], str)


async def test_errors_carry_a_reason_an_editor_can_show(peri: Peri, editor: Editor) -> None:
    async with running(peri, editor) as conn:
        with pytest.raises(RequestError) as unknown:
            await conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
        with pytest.raises(RequestError) as bad_cwd:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
    for error in (unknown.value, bad_cwd.value):
        assert isinstance(error.data, dict) and isinstance(error.data.get("reason"), str)
    assert "no such session" in unknown.value.data["reason"]
    assert "relative/dir" in bad_cwd.value.data["reason"]


def _read_answer(proc: subprocess.Popen[str], want: int) -> dict[str, Any]:
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == want and "method" not in message:
            return message
    raise AssertionError(f"no answer to {want}")


def test_a_malformed_cancel_logs_one_line_and_method_errors_have_a_reason(peri: Peri) -> None:
    log = peri.workspace.parent / "stderr.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "peri_cli", "acp"],
            cwd=peri.workspace,
            env=peri.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        assert proc.stdin is not None

        def send(message: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            proc.stdin.flush()

        try:
            send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
            _read_answer(proc, 1)
            send({"method": "session/cancel", "params": {}})  # no sessionId
            send({"method": "session/cancel", "params": {"sessionId": 5}})
            send({"id": 2, "method": "no/such/method", "params": {}})
            missing = _read_answer(proc, 2)
            send({"id": 3, "method": "session/new", "params": {"cwd": 5}})
            invalid = _read_answer(proc, 3)
        finally:
            proc.stdin.close()
            proc.wait(10)
    assert missing["error"]["code"] == -32601
    assert "no/such/method" in missing["error"]["data"]["reason"]
    assert invalid["error"]["code"] == -32602 and "cwd" in invalid["error"]["data"]["reason"]
    stderr = log.read_text()
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if "session/cancel" in line]
    assert len(lines) == 2 and len(stderr.splitlines()) == 2, stderr
    assert "sessionId" in lines[0]
