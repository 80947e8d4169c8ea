"""Streams read in a worker process and handed over in batches (the TUI's provider): every
character arrives in order, tool calls and errors split the batches where they happened, a
closed stream stops reading at once, a retry after a cut mid-stream loses nothing, and a worker
that dies fails its stream as a dropped connection."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator

import pytest

from peri_cli.base.messages import Message, TextPart, Usage, user_text
from peri_cli.base.provider import (
    MessageCompleted,
    ModelRequest,
    ProviderError,
    StreamEvent,
    StreamInterrupted,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
    ToolUseStarted,
)
from peri_cli.base.retry import Retrying, stream_with_retries
from peri_cli.providers.anthropic.provider import AnthropicProvider
from peri_cli.providers.batching import Inbox, StreamEnd, coalesce
from peri_cli.providers.procstream import ProcessProvider
from peri_cli.providers.wire import dump_items, dump_request, load_item, load_request
from tests.fakeserver import FakeServer
from tests.providers.streams import collect

REQ = ModelRequest(model="m", frozen_system="s", dynamic_system="", messages=[user_text("go")])
DONE = MessageCompleted(Message(role="assistant", content=[]), "end_turn", None)


def test_coalesce_joins_runs_of_one_kind_and_keeps_the_order() -> None:
    tool = ToolUseStarted(id="t1", name="Read")
    items = [
        ThinkingDelta("a"),
        ThinkingDelta("b"),
        TextDelta("c"),
        TextDelta("d"),
        tool,
        TextDelta("e"),
        ThinkingDelta("f"),
        TextDelta("g"),
        DONE,
        StreamEnd(),
    ]
    assert coalesce(items) == [
        ThinkingDelta("ab"),
        TextDelta("cd"),
        tool,
        TextDelta("e"),
        ThinkingDelta("f"),
        TextDelta("g"),
        DONE,
        StreamEnd(),
    ]
    assert coalesce([TextDelta("x"), TextDelta("y")]) == [TextDelta("xy")]  # flushed at the end
    assert coalesce([]) == []


async def test_an_inbox_fed_from_a_thread_gives_every_item_in_few_batches() -> None:
    inbox = Inbox(asyncio.get_running_loop())
    words = [f"w{i} " for i in range(20_000)]

    def produce() -> None:
        for i, word in enumerate(words):
            inbox.put(TextDelta(word))
            if i == 10_000:
                inbox.put(ToolUseStarted(id="t", name="Bash"))
        inbox.put(StreamEnd())

    threading.Thread(target=produce).start()
    got: list[StreamEvent | StreamEnd] = []
    batches = 0
    while not got or not isinstance(got[-1], StreamEnd):
        got += await inbox.take()
        batches += 1
    texts = [g.text for g in got if isinstance(g, TextDelta)]
    assert "".join(texts) == "".join(words)
    tool_at = next(i for i, g in enumerate(got) if isinstance(g, ToolUseStarted))
    assert "".join(texts[:tool_at]) == "".join(words[:10_001])  # the tool call split the text
    assert batches < len(words) / 10  # handed over in batches, not item by item


def test_the_wire_gives_back_what_it_was_given() -> None:
    odd = "caf\u00e9 \ud800 \x1b[31m"  # a lone surrogate and an escape survive the trip
    request = ModelRequest(
        model="m",
        frozen_system="frozen",
        dynamic_system=odd,
        messages=[user_text(odd), Message(role="assistant", content=[TextPart(text="hi")])],
        tools=[ToolSpec("Read", "reads", {"type": "object"})],
        max_tokens=99,
        cache_marks=(1,),
    )
    assert load_request(json.loads(json.dumps(dump_request(request)))) == request
    done = MessageCompleted(
        Message(role="assistant", content=[TextPart(text=odd)]), "tool_use", Usage(input_tokens=3)
    )
    items = [TextDelta(odd), ThinkingDelta("t"), ToolUseStarted(id="a", name="Bash"), done, DONE]
    back = [load_item(x) for x in json.loads(json.dumps(dump_items(items)))]
    assert back == items
    for error in (
        StreamInterrupted("cut"),
        ProviderError("slow down", retryable=True, retry_after=2.5, status=429),
    ):
        (item,) = [load_item(x) for x in dump_items([StreamEnd(error)])]
        assert isinstance(item, StreamEnd) and type(item.error) is type(error)
        assert vars(item.error) == vars(error) and str(item.error) == str(error)
    (bug,) = [load_item(x) for x in dump_items([StreamEnd(KeyError("x"))])]
    assert isinstance(bug, StreamEnd) and isinstance(bug.error, ProviderError)
    assert not bug.error.retryable and "KeyError" in str(bug.error)


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


@pytest.fixture
async def worker(server: FakeServer) -> AsyncIterator[ProcessProvider]:
    provider = ProcessProvider("anthropic", api_key="test-key", base_url=server.url)
    yield provider
    provider.close()


async def test_a_stream_arrives_whole_and_batched_as_in_process(
    server: FakeServer, worker: ProcessProvider
) -> None:
    reply = words(6000)
    script = [{"text": reply, "tool_calls": [{"name": "Read", "input": {"file_path": "a"}}]}]
    server.set_script(script * 2)
    deltas, done = await collect(worker, REQ)
    inline_deltas, inline = await collect(AnthropicProvider(api_key="k", base_url=server.url), REQ)
    assert (done.stop_reason, done.usage) == (inline.stop_reason, inline.usage)
    assert [(u.name, u.input) for u in done.message.tool_uses] == [("Read", {"file_path": "a"})]
    assert done.message.text == inline.message.text == reply
    text = "".join(e.text for e in deltas if isinstance(e, TextDelta))
    assert text == "".join(e.text for e in inline_deltas if isinstance(e, TextDelta)) == reply
    assert isinstance(deltas[-1], ToolUseStarted)  # after all the text, as the server sent it
    assert len(deltas) < len(inline_deltas) / 10  # batched
    assert (
        await worker.list_models()
        == await AnthropicProvider(api_key="k", base_url=server.url).list_models()
    )


async def test_an_error_mid_stream_comes_after_the_text_before_it(
    server: FakeServer, worker: ProcessProvider
) -> None:
    reply = words(3000)
    server.set_script([{"text": reply, "error_event": "invalid_request_error", "cut_after": 2003}])
    got = ""
    with pytest.raises(ProviderError, match="invalid_request_error") as raised:
        async for event in worker.stream(REQ):
            assert isinstance(event, TextDelta)
            got += event.text
    assert not raised.value.retryable and raised.value.status == 400
    assert got == reply[: len(got)] and len(got.split()) == 2000


async def test_a_retry_after_a_cut_mid_stream_yields_the_whole_reply(
    server: FakeServer, worker: ProcessProvider
) -> None:
    reply = words(3000)
    server.set_script([{"text": reply, "cut_after": 400}, {"text": reply}])
    attempts: list[str] = [""]
    done: list[MessageCompleted] = []
    async for event in stream_with_retries(worker, REQ, base_delay=0.01):
        if isinstance(event, Retrying):
            attempts.append("")
        elif isinstance(event, TextDelta):
            attempts[-1] += event.text
        elif isinstance(event, MessageCompleted):
            done.append(event)
    assert len(attempts) == 2
    assert reply.startswith(attempts[0]) and attempts[0] != reply  # the cut attempt: a prefix
    assert attempts[1] == reply == done[0].message.text


async def test_closing_a_stream_closes_its_connection_in_the_worker(
    server: FakeServer, worker: ProcessProvider
) -> None:
    server.set_script([{"text": words(500), "delay": 0.02}, {"text": "after"}])  # 10 s of reply

    def serving() -> int:  # the fake server's threads (one per request being answered)
        return sum(1 for t in threading.enumerate() if not t.name.startswith("peri-"))

    before = serving()
    events = worker.stream(REQ)
    assert isinstance(await anext(events), TextDelta)
    assert serving() == before + 1  # the thread writing the reply
    await events.aclose()  # type: ignore[attr-defined]
    for _ in range(100):  # its next write fails once the worker dropped the connection
        if serving() == before:
            break
        await asyncio.sleep(0.02)
    assert serving() == before
    _, done = await collect(worker, REQ)  # the worker serves the next one
    assert done.message.text == "after"


async def test_a_worker_that_dies_fails_the_stream_as_a_dropped_one(
    server: FakeServer, worker: ProcessProvider
) -> None:
    server.set_script([{"text": words(500), "delay": 0.02}, {"text": "again"}])
    events = worker.stream(REQ)
    assert isinstance(await anext(events), TextDelta)
    assert worker._proc is not None
    worker._proc.kill()
    with pytest.raises(StreamInterrupted):
        async for _ in events:
            pass
    _, done = await collect(worker, REQ)  # a new worker
    assert done.message.text == "again"


async def test_a_worker_that_cannot_start_says_why(server: FakeServer) -> None:
    broken = ProcessProvider("nope", api_key="secret-key", base_url=server.url)
    try:
        with pytest.raises(StreamInterrupted, match="unknown provider 'nope'"):
            await collect(broken, REQ)
    finally:
        broken.close()


async def test_the_openai_protocol_streams_through_the_worker_too(server: FakeServer) -> None:
    reply = words(2000)
    server.set_script([{"text": reply}])
    provider = ProcessProvider("openai", api_key="test-key", base_url=server.openai_url)
    try:
        deltas, done = await collect(provider, REQ)
    finally:
        provider.close()
    assert "".join(e.text for e in deltas if isinstance(e, TextDelta)) == reply
    assert done.message.text == reply and done.stop_reason == "end_turn"
    assert len(deltas) < 2000
