"""`query` and `PeriClient` end to end through the fake server (CONTRACT.md §8)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from peri_cli.sdk import (
    Allow,
    AssistantEvent,
    Deny,
    PeriClient,
    PermissionContext,
    ResultEvent,
    SystemEvent,
    query,
)
from peri_cli.session.transcript_file import load
from tests.fakeserver import FakeServer
from tests.sdk.conftest import API_KEY, model_calls, options_for, sent_text


async def _all(prompt: str, options: Any) -> list[Any]:
    return [e async for e in query(prompt, options)]


async def test_query_returns_text_and_a_result_with_usage(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script(
        [{"text": "Hello from Peri.", "usage": {"input_tokens": 12, "output_tokens": 4}}]
    )
    events = await _all("say hello", options_for(server, tmp_path))
    assert isinstance(events[0], SystemEvent) and events[0].subtype == "init"
    assert any(isinstance(e, AssistantEvent) and e.text == "Hello from Peri." for e in events)
    result = events[-1]
    assert isinstance(result, ResultEvent) and not result.is_error
    assert result.result == "Hello from Peri."
    assert result.usage["input_tokens"] == 12 and result.usage["output_tokens"] == 4
    assert json.loads(result.to_json())["type"] == "result"


async def test_a_denied_call_leaves_the_file_and_the_model_reads_why(
    server: FakeServer, tmp_path: Path
) -> None:
    asked: list[tuple[str, PermissionContext]] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        asked.append((name, ctx))
        return Deny("not in this job")

    server.set_script(
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "new"}}]},
            {"text": "Understood."},
        ]
    )
    options = options_for(server, tmp_path, can_use_tool=ask)
    (tmp_path / "ws" / "a.txt").write_text("old")
    events = await _all("overwrite a.txt", options)
    assert (tmp_path / "ws" / "a.txt").read_text() == "old"
    ((name, ctx),) = asked
    assert name == "Write" and ctx.tool_use_id.startswith("toolu_") and ctx.session_id
    assert ctx.suggested_rule is not None
    assert "not in this job" in sent_text(model_calls(server)[-1])
    result = events[-1]
    assert isinstance(result, ResultEvent)
    assert result.permission_denials[0]["reason"] == "not in this job"


async def test_the_edited_input_is_what_runs(server: FakeServer, tmp_path: Path) -> None:
    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        return Allow(updated_input={**tool_input, "content": "from the program\n"})

    server.set_script(
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": "b.txt", "content": "x"}}]},
            {"text": "Written."},
        ]
    )
    await _all("write b.txt", options_for(server, tmp_path, can_use_tool=ask))
    assert (tmp_path / "ws" / "b.txt").read_text() == "from the program\n"


async def test_resume_continues_the_same_transcript(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "first answer"}, {"text": "second answer"}, {"text": "third"}])
    options = options_for(server, tmp_path)
    first = (await _all("first question", options))[-1]
    assert isinstance(first, ResultEvent)
    options.resume = first.session_id
    second = (await _all("second question", options))[-1]
    assert isinstance(second, ResultEvent) and second.session_id == first.session_id
    files = list((tmp_path / "home" / ".peri" / "projects").glob("*/*.jsonl"))
    assert len(files) == 1
    assert "first question" in sent_text(model_calls(server)[-1])
    env = {**os.environ, **options.env, "PERI_HOME": str(options.peri_home)}
    done = subprocess.run(
        [sys.executable, "-m", "peri_cli", "-r", first.session_id, "-p", "third question"],
        cwd=options.cwd,
        env={k: v for k, v in env.items() if not k.startswith("OPENAI_")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    last = sent_text(model_calls(server)[-1])
    assert "first question" in last and "second question" in last and "third question" in last
    assert API_KEY not in done.stdout


async def test_interrupt_mid_stream_leaves_a_session_that_resumes(
    server: FakeServer, tmp_path: Path
) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    server.set_script([{"text": words, "delay": 0.02}, {"text": "resumed fine"}])
    options = options_for(server, tmp_path, include_partial_messages=True)
    async with PeriClient(options) as client:
        await client.send("talk for a long time")
        seen: list[Any] = []
        async for event in client.events():
            seen.append(event)
            if event.type == "text_delta":
                await client.interrupt()
        result = seen[-1]
        assert isinstance(result, ResultEvent) and result.error == "cancelled"
        await client.send("go on")
        events = [e async for e in client.events()]
        final = events[-1]
        assert isinstance(final, ResultEvent) and not final.is_error
        assert final.result == "resumed fine"
        session_id = client.session_id
    path = next((tmp_path / "home" / ".peri" / "projects").glob(f"*/{session_id}.jsonl"))
    assert load(path).header is not None


async def test_two_clients_in_one_loop_see_only_their_own_events(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script(
        [
            {"when": "task alpha", "text": "alpha done", "delay": 0.01},
            {"when": "task beta", "text": "beta done", "delay": 0.01},
        ]
    )

    async def run(name: str) -> list[Any]:
        async with PeriClient(options_for(server, tmp_path / name)) as client:
            await client.send(f"task {name}")
            return [e async for e in client.events()]

    alpha, beta = await asyncio.gather(run("alpha"), run("beta"))
    for events, mine, other in ((alpha, "alpha", "beta"), (beta, "beta", "alpha")):
        text = "\n".join(e.to_json() for e in events)
        assert f"{mine} done" in text and f"{other} done" not in text
        ids = {e.session_id for e in events if isinstance(e, (AssistantEvent, ResultEvent))}
        assert len(ids) == 1
    assert (tmp_path / "alpha" / "home" / ".peri" / "projects").is_dir()
    assert (tmp_path / "beta" / "home" / ".peri" / "projects").is_dir()


async def test_max_turns_stops_with_a_result_saying_so(server: FakeServer, tmp_path: Path) -> None:
    server.set_script(
        [{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]} for _ in range(3)]
    )
    result = (await _all("loop", options_for(server, tmp_path, max_turns=1)))[-1]
    assert isinstance(result, ResultEvent) and result.is_error
    assert result.error is not None and "max-turns" in result.error
    assert result.num_turns == 1


async def test_remember_project_writes_the_tuis_rule(server: FakeServer, tmp_path: Path) -> None:
    from peri_cli.permissions.rulefile import local_settings_path

    rules: list[str | None] = []

    async def ask(name: str, tool_input: dict[str, Any], ctx: PermissionContext) -> Allow:
        rules.append(ctx.suggested_rule)
        return Allow(remember="project")

    server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]},
            {"text": "done"},
        ]
    )
    await _all("say hi twice", options_for(server, tmp_path, can_use_tool=ask))
    assert len(rules) == 1  # the second call was allowed by the kept rule
    saved = json.loads(local_settings_path(tmp_path / "ws").read_text())
    assert saved["permissions"]["allow"] == [rules[0]]
    assert (tmp_path / "ws" / ".peri" / ".gitignore").read_text() == "settings.local.json\n"


class MemoryFiles:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    async def read_text(self, path: str) -> str:
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    async def write_text(self, path: str, text: str) -> None:
        self.files[path] = text


async def test_read_edit_and_write_go_through_the_file_port(
    server: FakeServer, tmp_path: Path
) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir(parents=True)
    port = MemoryFiles({str(ws / "notes.txt"): "unsaved buffer\n"})
    server.set_script(
        [
            {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
            {
                "tool_calls": [
                    {
                        "name": "Edit",
                        "input": {
                            "file_path": "notes.txt",
                            "old_string": "unsaved",
                            "new_string": "edited",
                        },
                    },
                    {"name": "Write", "input": {"file_path": "new.txt", "content": "made\n"}},
                ]
            },
            {"text": "done"},
        ]
    )
    options = options_for(server, tmp_path, files=port, permission_mode="bypass")
    await _all("edit notes", options)
    assert "unsaved buffer" in sent_text(model_calls(server)[1])
    assert port.files[str(ws / "notes.txt")] == "edited buffer\n"
    assert port.files[str(ws / "new.txt")] == "made\n"
    assert sorted(p.name for p in ws.iterdir()) == []


async def test_partial_events_only_when_asked(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "one two three"}, {"text": "one two three"}])
    plain = await _all("hi", options_for(server, tmp_path / "a"))
    assert not [e for e in plain if e.type in ("text_delta", "thinking_delta", "subagent")]
    partial = await _all("hi", options_for(server, tmp_path / "b", include_partial_messages=True))
    deltas = [e for e in partial if e.type == "text_delta"]
    assert "".join(e.text for e in deltas) == "one two three"


def test_importing_the_sdk_loads_no_textual_and_no_provider_sdk() -> None:
    code = (
        "import sys, peri_cli.sdk; "
        "print([m for m in ('textual', 'rich', 'anthropic', 'openai') if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
