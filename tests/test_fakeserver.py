"""The loopback fake API itself: its wire format, its validation, its control endpoints."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.fakeserver import FakeServer

USER = {"role": "user", "content": "hi"}


def post(url: str, body: Any) -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def anthropic(
    srv: FakeServer, messages: list[Any], **extra: Any
) -> tuple[int, dict[str, str], str]:
    body = {"model": "m", "max_tokens": 10, "messages": messages, **extra}
    return post(f"{srv.url}/v1/messages", body)


def sse(text: str) -> list[tuple[str | None, Any]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        kind = None
        data: Any = None
        for line in chunk.splitlines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = line[6:] if line[6:] == "[DONE]" else json.loads(line[6:])
        events.append((kind, data))
    return events


def test_anthropic_stream_has_event_lines_and_the_full_shape() -> None:
    script = [
        {
            "thinking": "hm",
            "signature": "S",
            "text": "a b",
            "tool_calls": [{"name": "Read", "input": {"p": 1}}],
        }
    ]
    with FakeServer(script) as srv:
        status, headers, text = anthropic(srv, [USER], stream=True)
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    events = sse(text)
    assert all(kind == data["type"] for kind, data in events)
    kinds = [kind for kind, _ in events]
    assert kinds[:2] == ["message_start", "ping"] and kinds[-2:] == [
        "message_delta",
        "message_stop",
    ]
    deltas = [d["delta"] for k, d in events if k == "content_block_delta"]
    assert {"type": "signature_delta", "signature": "S"} in deltas
    assert "".join(d.get("partial_json", "") for d in deltas) == '{"p": 1}'
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_non_streaming_replies_in_both_protocols() -> None:
    with FakeServer(
        [{"text": "hello"}, {"text": "hi", "usage": {"cache_read_input_tokens": 4}}]
    ) as srv:
        _, _, text = anthropic(srv, [USER])
        _, _, text2 = post(f"{srv.openai_url}/chat/completions", {"model": "m", "messages": [USER]})
    message = json.loads(text)
    assert message["content"] == [{"type": "text", "text": "hello"}]
    assert message["stop_reason"] == "end_turn"
    completion = json.loads(text2)
    assert completion["choices"][0]["message"]["content"] == "hi"
    assert completion["usage"]["prompt_tokens_details"] == {"cached_tokens": 4}


def test_openai_stream_chunks_usage_and_done() -> None:
    with FakeServer([{"tool_calls": [{"name": "Read", "input": {}}]}, {"text": "x"}]) as srv:
        body = {
            "model": "m",
            "messages": [USER],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        _, _, text = post(f"{srv.openai_url}/chat/completions", body)
        _, _, plain = post(f"{srv.openai_url}/chat/completions", {**body, "stream_options": None})
    events = [data for _, data in sse(text)]
    assert events[-1] == "[DONE]"
    assert events[-2]["choices"] == [] and events[-2]["usage"]["total_tokens"] > 0
    assert events[-3]["choices"][0]["finish_reason"] == "tool_calls"
    assert events[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "Read"
    assert not any("usage" in d for d in [data for _, data in sse(plain)][:-1])


EPHEMERAL = {"type": "ephemeral"}
TOOL_USE = {"type": "tool_use", "id": "t1", "name": "R", "input": {}}
ORPHAN = {"type": "tool_result", "tool_use_id": "t9"}
INVALID_ANTHROPIC = [
    ([USER, {"role": "assistant", "content": [TOOL_USE]}, USER], {}, "without `tool_result`"),
    (
        [USER, {"role": "assistant", "content": "ok"}, {"role": "user", "content": [ORPHAN]}],
        {},
        "unexpected `tool_use_id`",
    ),
    ([{"role": "assistant", "content": "x"}, USER], {}, "first message"),
    ([USER, USER], {}, "alternate"),
    (
        [USER, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}, USER],
        {},
        "signature",
    ),
    (
        [{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": EPHEMERAL}]}],
        {
            "system": [
                {"type": "text", "text": f"s{i}", "cache_control": EPHEMERAL} for i in range(4)
            ]
        },
        "maximum of 4",
    ),
]


@pytest.mark.parametrize(("messages", "extra", "needle"), INVALID_ANTHROPIC)
def test_anthropic_validation_answers_400(
    messages: list[Any], extra: dict[str, Any], needle: str
) -> None:
    with FakeServer([{"text": "never"}]) as srv:
        status, _, text = anthropic(srv, messages, **extra)
        assert srv.requests[-1]["status"] == 400
        _, _, after = anthropic(srv, [USER])
    body = json.loads(text)
    assert status == 400 and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error" and needle in body["error"]["message"]
    assert json.loads(after)["content"][0]["text"] == "never"  # the rejected call consumed nothing


def test_openai_validation_answers_400() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "R", "arguments": "{}"}}
    unanswered = [USER, {"role": "assistant", "content": None, "tool_calls": [call]}, USER]
    stray = [USER, {"role": "tool", "tool_call_id": "c1", "content": "x"}]
    answered = [*unanswered[:2], {"role": "tool", "tool_call_id": "c1", "content": "x"}, USER]
    with FakeServer() as srv:
        url = f"{srv.openai_url}/chat/completions"
        results = [post(url, {"model": "m", "messages": m}) for m in (unanswered, stray, answered)]
    assert [status for status, _, _ in results] == [400, 400, 200]
    assert "c1" in json.loads(results[0][2])["error"]["message"]
    assert json.loads(results[1][2])["error"]["type"] == "invalid_request_error"


def test_status_items_repeat_then_move_on() -> None:
    with FakeServer([{"status": 529, "times": 2, "retry_after": 3}, {"text": "up"}]) as srv:
        replies = [anthropic(srv, [USER]) for _ in range(3)]
        _, _, oai = post(f"{srv.openai_url}/chat/completions", {"model": "m", "messages": [USER]})
    assert [status for status, _, _ in replies] == [529, 529, 200]
    assert replies[0][1]["retry-after"] == "3"
    assert json.loads(replies[0][2])["error"] == {
        "type": "overloaded_error",
        "message": "Overloaded",
    }
    assert json.loads(oai)["choices"][0]["message"]["content"] == "ok"  # script exhausted


def test_control_endpoints() -> None:
    with FakeServer() as srv:
        status, _, _ = post(f"{srv.url}/_script", [{"text": "scripted via http"}])
        assert status == 200
        _, _, text = anthropic(srv, [USER])
        assert json.loads(text)["content"][0]["text"] == "scripted via http"
        with urllib.request.urlopen(f"{srv.url}/_requests", timeout=5) as response:
            recorded = json.loads(response.read())
    assert [r["path"] for r in recorded] == ["/v1/messages"]
    assert recorded[0]["body"]["messages"] == [USER]


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_model_list_in_both_shapes_and_configurable() -> None:
    with FakeServer(models=["m1", "m2"]) as srv:
        _, openai_page = get(f"{srv.openai_url}/models")
        _, anthropic_page = get(f"{srv.url}/v1/models", {"anthropic-version": "2023-06-01"})
        srv.set_models(None)
        missing, _ = get(f"{srv.openai_url}/models")
        post(f"{srv.url}/_models", ["m3"])
        _, later = get(f"{srv.openai_url}/models")
    assert openai_page["object"] == "list"
    assert [m["id"] for m in openai_page["data"]] == ["m1", "m2"]
    assert anthropic_page["has_more"] is False and anthropic_page["last_id"] == "m2"
    assert [m["type"] for m in anthropic_page["data"]] == ["model", "model"]
    assert missing == 404 and [m["id"] for m in later["data"]] == ["m3"]


def openai_stream(srv: FakeServer, include_usage: bool = True) -> list[Any]:
    body = {
        "model": "m",
        "messages": [USER],
        "stream": True,
        "stream_options": {"include_usage": include_usage},
    }
    _, _, text = post(f"{srv.openai_url}/chat/completions", body)
    return [data for _, data in sse(text)]


def test_openai_quirks_shape_the_stream() -> None:
    calls = [{"name": "Read", "input": {"p": 1}}, {"name": "Bash", "input": {}}]
    script = [
        {"tool_calls": calls, "quirks": ["no_index", "duplicate_ids", "split_name"]},
        {"tool_calls": calls, "quirks": ["object_arguments", "finish_stop"], "no_usage": True},
        {"text": "a b", "quirks": ["second_choice"]},
    ]
    with FakeServer(script) as srv:
        split = openai_stream(srv)
        whole = openai_stream(srv)
        two = openai_stream(srv)
    deltas = [c["choices"][0]["delta"]["tool_calls"][0] for c in split[1:-3]]
    assert all("index" not in d for d in deltas)
    assert [d["function"].get("name") for d in deltas[:2]] == ["Re", "ad"]
    assert {d.get("id") for d in deltas} == {"call_0", "", None}
    objects = [c["choices"][0]["delta"]["tool_calls"][0] for c in whole[1:3]]
    assert objects[0]["function"]["arguments"] == {"p": 1}
    assert whole[-2]["choices"][0]["finish_reason"] == "stop"  # and no usage chunk
    assert any(c["choices"] and c["choices"][0]["index"] == 1 for c in two[:-1])


@pytest.mark.parametrize("quirk", ["duplicate_ids", "no_ids"])
def test_openai_validation_rejects_duplicate_or_missing_call_ids(quirk: str) -> None:
    call = {"type": "function", "function": {"name": "R", "arguments": "{}"}, "id": "c1"}
    if quirk == "no_ids":
        del call["id"]
    calls = [call, {**call, "id": "c2"}] if quirk == "no_ids" else [call, call]
    messages = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c.get("id"), "content": "x"} for c in calls),
    ]
    with FakeServer() as srv:
        status, _, text = post(
            f"{srv.openai_url}/chat/completions", {"model": "m", "messages": messages}
        )
    assert status == 400 and "id" in json.loads(text)["error"]["message"]


def test_broken_json_line_is_inserted() -> None:
    with FakeServer([{"text": "a b", "invalid_json_at": 1}]) as srv:
        body = {"model": "m", "messages": [USER], "stream": True}
        _, _, text = post(f"{srv.openai_url}/chat/completions", body)
    lines = [line for line in text.split("\n") if line.startswith("data: ")]
    assert (
        lines[1].startswith('data: {"type": "content_block_delta"') and lines[-1] == "data: [DONE]"
    )
    with pytest.raises(ValueError):
        json.loads(lines[1][6:])


def test_runs_as_a_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from a file"}]))
    server = Path(__file__).with_name("fakeserver.py")
    proc = subprocess.Popen(
        [sys.executable, str(server), "--port", "0", "--script", str(script), "--models", "x,y"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("LISTENING ")
        url = f"http://127.0.0.1:{int(line.split()[1])}"
        _, _, text = post(f"{url}/v1/messages", {"model": "m", "max_tokens": 5, "messages": [USER]})
        assert json.loads(text)["content"][0]["text"] == "from a file"
        with urllib.request.urlopen(f"{url}/_requests", timeout=5) as response:
            assert len(json.loads(response.read())) == 1
        assert [m["id"] for m in get(f"{url}/v1/models")[1]["data"]] == ["x", "y"]
    finally:
        proc.terminate()
        proc.wait(timeout=5)
