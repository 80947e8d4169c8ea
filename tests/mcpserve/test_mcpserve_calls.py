"""Issue 40, `peri mcp serve` end to end with the official `mcp` client: a call returns Peri's text
and session id, `peri_reply` continues it, the session is an ordinary one (`peri -r ID`), calls run
two at once and a third waits for a slot, and progress arrives as MCP progress notifications."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from mcp import Client

from tests.e2e.conftest import Peri
from tests.mcpserve.conftest import serving, stderr_of


async def call(
    client: Client, tool: str, args: dict[str, Any], progress: list[str] | None = None
) -> Any:
    async def noted(value: float, total: float | None, message: str | None) -> None:
        if progress is not None:
            progress.append(message or "")

    return await client.call_tool(tool, args, progress_callback=noted)


async def test_a_call_returns_the_final_text_and_the_session_id(peri: Peri) -> None:
    peri.server.set_script([{"text": "hello from peri"}])
    progress: list[str] = []
    async with serving(peri) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["peri", "peri_reply"]
        result = await call(client, "peri", {"prompt": "say hi"}, progress)
    assert not result.is_error, (result, stderr_of(peri))
    assert result.content[0].text == "hello from peri"
    data = result.structured_content
    assert data["result"] == "hello from peri" and data["is_error"] is False
    assert data["permission_mode"] == "default"
    assert data["usage"]["output_tokens"] > 0
    assert (peri.sessions_dir / f"{data['session_id']}.jsonl").exists()
    assert progress[:1] == ["started"] and "replied" in progress


async def test_peri_reply_continues_the_session_and_peri_r_continues_it_too(peri: Peri) -> None:
    peri.server.set_script([{"text": "first answer"}, {"text": "second answer"}])
    async with serving(peri) as client:
        first = await call(client, "peri", {"prompt": "task one"})
        sid = first.structured_content["session_id"]
        second = await call(client, "peri_reply", {"session_id": sid, "prompt": "and then?"})
    assert not second.is_error, second
    assert second.content[0].text == "second answer"
    assert second.structured_content["session_id"] == sid
    sent = json.dumps(peri.server.bodies[-1]["messages"])
    assert "task one" in sent and "first answer" in sent and "and then?" in sent
    # an ordinary Peri session: `peri -r ID` continues it
    peri.server.set_script([{"text": "third answer"}])
    done = peri.run("-p", "-r", sid, "once more")
    assert done.returncode == 0, done.stderr
    assert "third answer" in done.stdout
    assert "second answer" in json.dumps(peri.server.bodies[-1]["messages"])


async def test_peri_reply_to_a_session_started_by_peri_p_in_the_folder(peri: Peri) -> None:
    peri.server.set_script([{"text": "from -p"}, {"text": "from the server"}])
    sid = peri.json("-p", "start here")["session_id"]
    async with serving(peri) as client:
        reply = await call(client, "peri_reply", {"session_id": sid, "prompt": "go on"})
        unknown = await call(
            client,
            "peri_reply",
            {"session_id": "0190a0b0-0000-7000-8000-000000000000", "prompt": "x"},
        )
    assert not reply.is_error and reply.content[0].text == "from the server", reply
    assert unknown.is_error and "no session" in unknown.content[0].text


async def test_two_calls_run_at_once_and_a_third_waits_for_a_slot(peri: Peri) -> None:
    peri.server.set_script(
        [{"when": f"task {n}", "text": f"answer {n} " * 8, "pace": 1.5} for n in (1, 2, 3)]
    )
    progress: dict[int, list[str]] = {1: [], 2: [], 3: []}
    started: dict[int, float] = {}
    ended: dict[int, float] = {}
    async with serving(peri, "--max-concurrent", "2") as client:

        async def one(n: int, delay: float) -> Any:
            await asyncio.sleep(delay)

            async def noted(value: float, total: float | None, message: str | None) -> None:
                progress[n].append(message or "")
                if message == "started":
                    started[n] = time.monotonic()

            args = {"prompt": f"task {n}"}
            result = await client.call_tool("peri", args, progress_callback=noted)
            ended[n] = time.monotonic()
            return result

        results = await asyncio.gather(one(1, 0), one(2, 0), one(3, 0.3))
    for n, result in enumerate(results, 1):
        assert not result.is_error, result
        assert result.content[0].text.startswith(f"answer {n}")
    # 1 and 2 both running before either ended; 3 started only once one of them was done: a
    # slot frees no sooner than 1.5 s (a reply's pace) after the first of them started
    assert max(started[1], started[2]) < min(ended[1], ended[2]), (started, ended)
    assert started[3] > min(started[1], started[2]) + 1.4, (started, ended)
    assert progress[3][0].startswith("waiting: 2 calls already running"), progress[3]
    assert not any(p.startswith("waiting") for p in progress[1] + progress[2])


async def test_a_calls_model_is_the_one_asked_for(peri: Peri) -> None:
    peri.server.set_script([{"text": "ok"}])
    progress: list[str] = []
    async with serving(peri) as client:
        result = await call(client, "peri", {"prompt": "hi", "model": "claude-test-7"}, progress)
        odd = await call(client, "peri", {"prompt": "hi", "model": 7})
    assert not result.is_error, result
    assert peri.server.bodies[-1]["model"] == "claude-test-7"
    assert odd.is_error and "model must be a string" in odd.content[0].text
