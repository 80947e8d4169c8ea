"""OpenAI-compatible servers as they really stream (issue 9 items 6, 10, 14; issue 10 usage and
model list), through the real `openai` SDK against the loopback fake server."""

from __future__ import annotations

import pytest

from peri_cli.base.messages import Message, tool_result, user_text
from peri_cli.base.provider import (
    MessageCompleted,
    ModelRequest,
    ProviderError,
    StreamEvent,
    StreamInterrupted,
    TextDelta,
    ToolSpec,
    ToolUseStarted,
)
from peri_cli.base.retry import Retrying, stream_with_retries
from peri_cli.providers.openai.provider import OpenAIProvider
from tests.fakeserver import DEFAULT_MODELS, FakeServer
from tests.providers.streams import collect

KEY = "sk-proj-FAKE-KEY-do-not-leak-4242"
PASSWORD = "hunter2-PWD-7731"
READ = ToolSpec("Read", "Read a file", {"type": "object"})
BASH = ToolSpec("Bash", "Run a command", {"type": "object"})
TWO_CALLS = {
    "text": "Looking.",
    "tool_calls": [
        {"name": "Read", "input": {"path": "a.py", "limit": 10}},
        {"name": "Bash", "input": {"command": "ls -la"}},
    ],
}


@pytest.fixture
def provider(server: FakeServer) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", api_key=KEY, base_url=server.openai_url)


def request(*messages: Message) -> ModelRequest:
    return ModelRequest(
        model="gpt-test",
        frozen_system="You are Peri.",
        dynamic_system="",
        messages=list(messages),
        tools=[READ, BASH],
    )


async def no_sleep(_seconds: float) -> None:
    pass


async def two_calls(
    server: FakeServer, provider: OpenAIProvider, quirks: list[str]
) -> tuple[list[StreamEvent], MessageCompleted]:
    """One reply with a Read and a Bash call, streamed with `quirks`; checked call by call."""
    server.set_script([{**TWO_CALLS, "quirks": quirks}])
    deltas, done = await collect(provider, request(user_text("go")))
    uses = done.message.tool_uses
    assert [(u.name, u.input) for u in uses] == [
        ("Read", {"path": "a.py", "limit": 10}),
        ("Bash", {"command": "ls -la"}),
    ]
    started = [e for e in deltas if isinstance(e, ToolUseStarted)]
    assert started == [ToolUseStarted(id=u.id, name=u.name) for u in uses]
    assert done.stop_reason == "tool_use"
    return deltas, done


async def answer_is_accepted(
    server: FakeServer, provider: OpenAIProvider, *history: Message
) -> None:
    """The history, each reply's calls answered, is a request the server accepts."""
    messages: list[Message] = [user_text("go")]
    for reply in history:
        results = [tool_result(u.id, "done") for u in reply.tool_uses]
        messages += [reply, Message(role="user", content=results)]
    await collect(provider, request(*messages))
    assert server.requests[-1]["status"] == 200, server.requests[-1]


QUIRK_SETS = [
    ["no_index"],
    ["index_zero"],
    ["no_index", "split_name"],
    ["no_index", "duplicate_ids"],
    ["no_index", "no_ids"],
    ["index_zero", "no_ids"],
    ["repeat_name"],
    ["finish_stop", "no_index"],
]


@pytest.mark.parametrize("quirks", QUIRK_SETS, ids=["+".join(q) for q in QUIRK_SETS])
async def test_item14_tool_calls_without_index_start_a_new_call_per_id(
    server: FakeServer, provider: OpenAIProvider, quirks: list[str]
) -> None:
    _, done = await two_calls(server, provider, quirks)
    await answer_is_accepted(server, provider, done.message)


@pytest.mark.parametrize("quirks", [["object_arguments"], ["object_arguments", "no_index"]])
async def test_item14_arguments_sent_as_a_json_object_are_serialized(
    server: FakeServer, provider: OpenAIProvider, quirks: list[str]
) -> None:
    _, done = await two_calls(server, provider, quirks)
    await answer_is_accepted(server, provider, done.message)
    sent = server.requests[-1]["body"]["messages"][2]["tool_calls"][0]["function"]
    assert sent == {"name": "Read", "arguments": '{"path": "a.py", "limit": 10}'}


async def test_item14_tool_name_split_across_chunks_is_concatenated(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    deltas, done = await two_calls(server, provider, ["split_name"])
    assert [e.name for e in deltas if isinstance(e, ToolUseStarted)] == ["Read", "Bash"]
    await answer_is_accepted(server, provider, done.message)


async def test_item14_text_of_a_second_choice_is_ignored(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"text": "only the first choice", "quirks": ["second_choice"]}])
    deltas, done = await collect(provider, request(user_text("go")))
    assert done.message.text == "only the first choice"
    assert "".join(e.text for e in deltas if isinstance(e, TextDelta)) == "only the first choice"
    assert done.stop_reason == "end_turn"


@pytest.mark.parametrize("quirk", ["duplicate_ids", "no_ids"])
async def test_item14_every_call_gets_a_fresh_unique_id(
    server: FakeServer, provider: OpenAIProvider, quirk: str
) -> None:
    _, first = await two_calls(server, provider, [quirk])
    _, second = await two_calls(server, provider, [quirk])
    ids = [u.id for u in first.message.tool_uses + second.message.tool_uses]
    assert len(set(ids)) == 4 and all(ids) and "call_0" not in ids
    # The whole session stays a valid request: no id is used twice, none is empty.
    await answer_is_accepted(server, provider, first.message, second.message)


async def test_item14_ids_are_fresh_even_when_the_server_sends_good_ones(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    _, done = await two_calls(server, provider, [])
    assert not any(u.id.startswith("call_fake_") for u in done.message.tool_uses)


async def test_item10_invalid_json_in_stream_is_retried(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"text": "one two three", "invalid_json_at": 2}, {"text": "recovered"}])
    with pytest.raises(StreamInterrupted) as error:
        await collect(provider, request(user_text("hi")))
    assert error.value.retryable and "JSON" in str(error.value)
    server.set_script([{"text": "one two three", "invalid_json_at": 2}, {"text": "recovered"}])
    events = [
        e async for e in stream_with_retries(provider, request(user_text("hi")), sleep=no_sleep)
    ]
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2]
    assert isinstance(events[-1], MessageCompleted) and events[-1].message.text == "recovered"


async def test_item10_invalid_json_every_time_fails_cleanly(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"text": "x y", "invalid_json_at": 1}] * 3)
    with pytest.raises(ProviderError) as error:
        async for _ in stream_with_retries(
            provider, request(user_text("hi")), max_attempts=3, sleep=no_sleep
        ):
            pass
    assert "JSON" in str(error.value) and len(server.requests) == 3


@pytest.mark.parametrize("data", ["42", "[1, 2]", '"text"', "null", '{"choices": 7}'])
async def test_item10_a_chunk_that_is_not_an_object_is_a_dropped_stream(
    server: FakeServer, provider: OpenAIProvider, data: str
) -> None:
    """Valid JSON of the wrong shape is as broken as invalid JSON: retryable, no traceback."""
    server.set_script([{"text": "a b", "invalid_json_at": 1, "bad_data": data}])
    with pytest.raises(StreamInterrupted):
        await collect(provider, request(user_text("hi")))


async def test_issue10_a_stream_without_usage_reports_none(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"text": "no usage here", "no_usage": True}, {"text": "with usage"}])
    _, done = await collect(provider, request(user_text("hi")))
    assert done.usage is None and done.message.text == "no usage here"
    _, counted = await collect(provider, request(user_text("hi")))
    assert counted.usage is not None and counted.usage.input_tokens > 0


async def test_issue10_model_list_is_asked_once(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    assert await provider.list_models() == DEFAULT_MODELS
    assert await provider.list_models() == DEFAULT_MODELS
    asked = [r for r in server.requests if r["path"].endswith("/models")]
    assert len(asked) == 1 and asked[0]["method"] == "GET"


async def test_issue10_a_server_without_a_model_list_gives_none(server: FakeServer) -> None:
    server.set_models(None)
    provider = OpenAIProvider("m", api_key=KEY, base_url=server.openai_url)
    assert await provider.list_models() is None
    with FakeServer() as gone:
        url = gone.openai_url
    assert await OpenAIProvider("m", api_key=KEY, base_url=url).list_models() is None


async def test_issue10_ollama_latest_tags_also_answer_to_their_short_name(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_models(["llama3.2:latest", "qwen2.5-coder:7b"])
    models = await provider.list_models()
    assert models is not None
    assert {"llama3.2:latest", "llama3.2", "qwen2.5-coder:7b"} <= set(models)
    assert "qwen2.5-coder" not in models


async def test_item6_password_in_base_url_is_never_shown(server: FakeServer) -> None:
    with_password = server.openai_url.replace("http://", f"http://peri:{PASSWORD}@")
    provider = OpenAIProvider("m", api_key=KEY, base_url=with_password)
    server.set_script(
        [
            {"status": 500, "message": f"upstream {with_password}/chat/completions failed"},
            {"status": 400, "message": f"wrong password {PASSWORD}"},
        ]
    )
    for _ in range(2):
        with pytest.raises(ProviderError) as error:
            await collect(provider, request(user_text("hi")))
        assert PASSWORD not in str(error.value)
    with FakeServer() as gone:
        dead = gone.openai_url.replace("http://", f"http://peri:{PASSWORD}@")
    with pytest.raises(ProviderError) as unreachable:
        await collect(OpenAIProvider("m", api_key=KEY, base_url=dead), request(user_text("hi")))
    message = str(unreachable.value)
    assert PASSWORD not in message and "could not reach" in message and "***@127.0.0.1" in message
