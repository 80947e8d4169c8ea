"""Compaction end to end: the real `peri` process against the loopback fake Anthropic server."""

from __future__ import annotations

import copy
import json
import subprocess
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.conftest import Peri

WINDOW = 16_000
MARKER = "cut by context compaction"
LINES_PER_FILE = 80


def file_text(n: int) -> str:
    return "".join(
        f"line {k} of big_{n}: the quick brown fox jumps over the lazy dog {k * n}\n"
        for k in range(1, LINES_PER_FILE + 1)
    )


@dataclass
class Chat:
    """One session driven through successive `peri -p` runs (the first creates it, the rest
    resume it), each with its own fake-server script."""

    peri: Peri
    session_id: str | None = None

    def run(
        self, prompt: str, script: list[dict[str, Any]], *, env: dict[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]], list[dict[str, Any]]]:
        """Returns the process, its stream-json lines and the model requests it made."""
        server = self.peri.server
        server.set_script(script)
        seen = len(server.requests)
        args = ["-p", prompt, "--output-format", "stream-json"]
        if self.session_id:
            args += ["-r", self.session_id]
        saved = dict(self.peri.extra_env)
        self.peri.extra_env.update(env or {})
        try:
            proc = self.peri.run(*args)
        finally:
            self.peri.extra_env = saved
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        for line in lines:
            if line.get("type") == "system" and line.get("subtype") == "init":
                self.session_id = line["session_id"]
        bodies = [r["body"] for r in server.requests[seen:] if r["path"] == "/v1/messages"]
        return proc, lines, bodies

    def transcript(self) -> str:
        assert self.session_id is not None
        return self.peri.transcript(self.session_id).read_text(encoding="utf-8")


@pytest.fixture
def chat(peri: Peri) -> Chat:
    for n in range(12):
        (peri.workspace / f"big_{n}.txt").write_text(file_text(n))
    peri.extra_env["PERI_CONTEXT_WINDOW"] = str(WINDOW)
    return Chat(peri)


def read_turn(n: int) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": "Read", "input": {"file_path": f"big_{n}.txt"}}]},
        {"text": f"I read big_{n}."},
    ]


def strip_cache(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without cache_control marks (only the newest message carries one)."""
    out = copy.deepcopy(messages)
    for message in out:
        for block in message["content"] if isinstance(message["content"], list) else []:
            block.pop("cache_control", None)
    return out


def result_text(message: dict[str, Any]) -> str:
    texts: list[str] = []
    for block in message["content"]:
        if block["type"] == "tool_result":
            content = block.get("content")
            if isinstance(content, str):
                texts.append(content)
            else:
                texts.extend(c.get("text", "") for c in content or [])
        elif block["type"] == "text":
            texts.append(block["text"])
    return "\n".join(texts)


def request_tokens(body: dict[str, Any]) -> int:
    return len(json.dumps(body)) // 4  # how the fake server reports input tokens


def all_text(body: dict[str, Any]) -> str:
    return "\n".join(result_text(m) for m in body["messages"])


def assert_same_prefix(before: dict[str, Any], after: dict[str, Any]) -> None:
    """The first request after a restart starts with exactly the view the last one had."""
    old = strip_cache(before["messages"])
    new = strip_cache(after["messages"])
    assert new[: len(old)] == old


@pytest.mark.timeout(240)
def test_many_large_results_stay_under_the_window(chat: Chat) -> None:
    # Room for Micro's large step: the protected tail (a quarter of the window) and the system
    # prompt and tools leave half the window free to project. (In a 16k window they fill most of
    # it, so Micro's steps would be small, and waiting for Full costs less.)
    window = 24_000
    chat.peri.extra_env["PERI_CONTEXT_WINDOW"] = str(window)
    last: dict[str, Any] | None = None
    compactions: list[dict[str, Any]] = []
    sizes: list[int] = []
    turns = 11
    for n in range(turns):
        proc, lines, bodies = chat.run(f"Please read big_{n}.txt", read_turn(n))
        assert proc.returncode == 0, proc.stderr
        compactions += [line for line in lines if line["type"] == "compact"]
        sizes += [request_tokens(b) for b in bodies]
        if last is not None and not any(line["type"] == "compact" for line in lines):
            assert_same_prefix(last, bodies[0])  # resume renders the view last sent
        last = bodies[-1]
    assert last is not None
    assert max(sizes) < window
    micro = [c for c in compactions if c["strategy"] == "micro"]
    assert micro, compactions
    for c in micro:
        assert isinstance(c["tokens_before"], int) and c["tokens_after"] < c["tokens_before"]
    assert not [c for c in compactions if c["strategy"] == "full"]
    # The oldest results are shortened in the request, the newest are whole ...
    first_result = result_text(last["messages"][2])
    assert "line 1 of big_0" in first_result and MARKER in first_result
    assert "line 40 of big_0" not in first_result
    assert f"line 40 of big_{turns - 1}:" in result_text(last["messages"][-1])
    assert MARKER not in result_text(last["messages"][-1])
    # ... while the transcript keeps every original line.
    record = chat.transcript()
    for n in range(turns):
        assert f"line 40 of big_{n}:" in record
    assert '"type":"projection"' in record
    # A restart with compaction off sends the same projected view, directives applied.
    proc, _, bodies = chat.run("Anything else?", [{"text": "no"}], env={"DISABLE_COMPACT": "1"})
    assert proc.returncode == 0, proc.stderr
    assert_same_prefix(last, bodies[0])
    assert MARKER in result_text(bodies[0]["messages"][2])


@pytest.mark.timeout(120)
def test_compact_command_summarizes_and_the_next_request_carries_the_summary(chat: Chat) -> None:
    for n in range(3):
        proc, _, _ = chat.run(f"Please read big_{n}.txt", read_turn(n))
        assert proc.returncode == 0, proc.stderr
    summary = "<summary>Goal: read the big files. Done: big_0..big_2. Next: none.</summary>"
    proc, lines, bodies = chat.run("/compact the file reading", [{"text": summary}])
    assert proc.returncode == 0, proc.stderr
    (request,) = bodies
    assert "tools" not in request or request["tools"] == []
    blocks = [b["type"] for m in request["messages"] for b in m["content"]]
    assert set(blocks) == {"text"}
    assert "the file reading" in request["messages"][-1]["content"][-1]["text"]
    (event,) = [line for line in lines if line["type"] == "compact"]
    assert event["strategy"] == "full" and event["affected"] == 12
    assert isinstance(event["tokens_before"], int) and isinstance(event["tokens_after"], int)
    assert event["tokens_after"] < event["tokens_before"]
    result = lines[-1]
    assert result["type"] == "result" and not result["is_error"]
    assert "Compacted" in result["result"]

    proc, _, bodies = chat.run("Carry on", [{"text": "carrying on"}])
    assert proc.returncode == 0, proc.stderr
    (after,) = bodies
    first = result_text(after["messages"][0])
    assert "Goal: read the big files" in first
    # What the user typed stays, word for word, after the summary; what tools returned goes.
    assert first.index("Goal: read the big files") < first.index("Please read big_0.txt")
    assert "line 40 of big_0" not in all_text(after)
    assert not any(
        b["type"] in ("tool_use", "tool_result") for m in after["messages"] for b in m["content"]
    )
    assert "line 1 of big_2" in first  # the most recently read file is re-injected
    assert request_tokens(after) < WINDOW // 2
    # Resume again: the same view, plus the new turn.
    proc, _, bodies = chat.run("And again", [{"text": "again"}])
    assert proc.returncode == 0, proc.stderr
    assert_same_prefix(after, bodies[0])
    assert "Please read big_0.txt" in chat.transcript()  # the record keeps everything


@pytest.mark.timeout(120)
def test_a_failing_summary_leaves_history_untouched(chat: Chat) -> None:
    for n in range(2):
        proc, _, bodies = chat.run(f"Please read big_{n}.txt", read_turn(n))
        assert proc.returncode == 0, proc.stderr
    last = bodies[-1]
    before = chat.transcript()
    proc, lines, requests = chat.run(
        "/compact", [{"status": 400, "message": "summary refused by the fake server"}]
    )
    assert proc.returncode == 1
    assert len(requests) == 1
    failed = [line for line in lines if line["type"] == "compact"]
    assert failed and failed[0]["strategy"] == "failed"
    assert "summary refused by the fake server" in failed[0]["error"]
    assert lines[-1]["is_error"] is True
    assert chat.transcript() == before
    proc, _, bodies = chat.run("Carry on", [{"text": "ok"}])
    assert proc.returncode == 0, proc.stderr
    assert_same_prefix(last, bodies[0])
    assert "Please read big_0.txt" in all_text(bodies[0])
