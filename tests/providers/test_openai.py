"""OpenAIProvider through the real `openai` SDK against the loopback fake server."""

from __future__ import annotations

import pytest

from peri_cli.base.messages import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    tool_result,
    user_text,
)
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
from peri_cli.providers.common import RAW_INPUT_KEY
from peri_cli.providers.factory import make_provider
from peri_cli.providers.openai.provider import OpenAIProvider
from tests.fakeserver import FakeServer
from tests.providers.streams import collect

KEY = "sk-proj-FAKE-KEY-do-not-leak-4242"
FROZEN = "You are Peri.\nFrozen base prompt — bytes that never change.\n"
READ = ToolSpec(
    "Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)


@pytest.fixture
def provider(server: FakeServer) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", api_key=KEY, base_url=server.openai_url)


def request(
    *messages: Message, dynamic: str = "", tools: list[ToolSpec] | None = None
) -> ModelRequest:
    return ModelRequest(
        model="gpt-test",
        frozen_system=FROZEN,
        dynamic_system=dynamic,
        messages=list(messages),
        tools=tools or [],
    )


async def test_text_streams_and_usage_maps_cached_tokens(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    usage = {"input_tokens": 100, "output_tokens": 7, "cache_read_input_tokens": 900}
    server.set_script([{"text": "Hello there, world", "usage": usage}])
    deltas, done = await collect(provider, request(user_text("hi")))
    assert [e.text for e in deltas if isinstance(e, TextDelta)] == ["Hello ", "there, ", "world"]
    assert done.message == Message(role="assistant", content=[TextPart(text="Hello there, world")])
    assert done.stop_reason == "end_turn"
    # prompt_tokens = 1000 of which 900 cached -> input 100, cache read 900
    assert done.usage.input_tokens == 100
    assert done.usage.cache_read_input_tokens == 900
    assert done.usage.output_tokens == 7
    body = server.requests[-1]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 8192
    assert server.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}"


async def test_frozen_bytes_are_an_exact_prefix_of_the_system_message(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    await collect(provider, request(user_text("a"), dynamic="<reminder>x</reminder>"))
    await collect(provider, request(user_text("a")))
    with_dynamic, frozen_only = (r["body"]["messages"][0] for r in server.requests)
    assert with_dynamic["role"] == "system"
    assert with_dynamic["content"] == FROZEN + "\n\n<reminder>x</reminder>"
    assert with_dynamic["content"].encode().startswith(FROZEN.encode())
    assert frozen_only["content"] == FROZEN
    assert [m["role"] for m in server.requests[0]["body"]["messages"]] == ["system", "user"]


async def test_tool_call_round_trip_passes_validation(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script(
        [
            {
                "text": "Reading both.",
                "tool_calls": [
                    {"name": "Read", "input": {"path": "a.py"}},
                    {"name": "Read", "input": {"path": "b.py"}},
                ],
            }
        ]
    )
    deltas, done = await collect(provider, request(user_text("read"), tools=[READ]))
    uses = done.message.tool_uses
    assert [u.input for u in uses] == [{"path": "a.py"}, {"path": "b.py"}]
    assert [e for e in deltas if isinstance(e, ToolUseStarted)] == [
        ToolUseStarted(id=u.id, name="Read") for u in uses
    ]
    assert done.stop_reason == "tool_use"
    answer = Message(
        role="user", content=[tool_result(u.id, f"content {i}") for i, u in enumerate(uses)]
    )
    await collect(provider, request(user_text("read"), done.message, answer, user_text("more")))
    assert server.requests[-1]["status"] == 200
    sent = server.requests[-1]["body"]["messages"]
    assert sent[2]["role"] == "assistant" and sent[2]["content"] == "Reading both."
    assert [c["id"] for c in sent[2]["tool_calls"]] == [u.id for u in uses]
    assert sent[2]["tool_calls"][0]["function"] == {"name": "Read", "arguments": '{"path": "a.py"}'}
    assert sent[3:5] == [
        {"role": "tool", "tool_call_id": uses[0].id, "content": "content 0"},
        {"role": "tool", "tool_call_id": uses[1].id, "content": "content 1"},
    ]
    assert sent[5] == {"role": "user", "content": "more"}
    assert server.requests[0]["body"]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file",
                "parameters": READ.input_schema,
            },
        }
    ]


async def test_images_in_tool_results_follow_in_a_user_message(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    use = ToolUsePart(id="call_1", name="Read", input={"path": "p.png"})
    image = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        user_text("look"),
        Message(role="assistant", content=[ThinkingPart(thinking="hmm", signature="s"), use]),
        Message(
            role="user",
            content=[ToolResultPart(tool_use_id="call_1", content=[TextPart(text="png"), image])],
        ),
    ]
    await collect(provider, request(*history))
    assert server.requests[-1]["status"] == 200
    sent = server.requests[-1]["body"]["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "Read", "arguments": '{"path": "p.png"}'},
            }
        ],
    }
    assert sent[3]["role"] == "tool" and sent[3]["content"].startswith("png\n[1 image(s)")
    assert sent[4]["role"] == "user"
    assert sent[4]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }


async def test_reasoning_streams_as_thinking_and_is_not_sent_back(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"thinking": "step one", "text": "answer", "stop_reason": "max_tokens"}])
    deltas, done = await collect(provider, request(user_text("q")))
    assert "".join(e.text for e in deltas if isinstance(e, ThinkingDelta)) == "step one"
    assert done.message.content == [ThinkingPart(thinking="step one"), TextPart(text="answer")]
    assert done.stop_reason == "max_tokens"
    await collect(provider, request(user_text("q"), done.message, user_text("go on")))
    assert server.requests[-1]["body"]["messages"][2] == {"role": "assistant", "content": "answer"}


async def test_malformed_tool_arguments_do_not_crash(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"tool_calls": [{"name": "Read", "raw_arguments": "{not json"}]}])
    _, done = await collect(provider, request(user_text("hi"), tools=[READ]))
    [use] = done.message.tool_uses
    assert use.input == {RAW_INPUT_KEY: "{not json"}
    answer = Message(role="user", content=[tool_result(use.id, "bad input", is_error=True)])
    await collect(provider, request(user_text("hi"), done.message, answer))
    assert server.requests[-1]["status"] == 200
    assert server.requests[-1]["body"]["messages"][3]["content"] == "Error: bad input"


async def test_cut_stream_raises_stream_interrupted(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script(
        [
            {"text": "one two three", "cut_after": 3},
            {"text": "one two three", "cut_after": 4, "graceful": True},
        ]
    )
    for _ in range(2):
        seen: list[StreamEvent] = []
        with pytest.raises(StreamInterrupted):
            async for event in provider.stream(request(user_text("hi"))):
                seen.append(event)
        assert [e for e in seen if isinstance(e, TextDelta)]


async def test_status_errors_map_to_retryable_or_not(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"status": 429, "retry_after": 3}, {"status": 503}, {"status": 400}])
    with pytest.raises(ProviderError) as limited:
        await collect(provider, request(user_text("hi")))
    assert limited.value.retryable and limited.value.retry_after == 3.0
    assert limited.value.status == 429
    with pytest.raises(ProviderError) as unavailable:
        await collect(provider, request(user_text("hi")))
    assert unavailable.value.retryable and unavailable.value.retry_after is None
    with pytest.raises(ProviderError) as bad:
        await collect(provider, request(user_text("hi")))
    assert not bad.value.retryable and bad.value.status == 400


async def test_server_rejects_unanswered_tool_call(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    use = ToolUsePart(id="call_lost", name="Read", input={})
    history = [user_text("a"), Message(role="assistant", content=[use]), user_text("b")]
    with pytest.raises(ProviderError) as error:
        await collect(provider, request(*history))
    assert error.value.status == 400 and "call_lost" in str(error.value)


async def test_error_inside_stream_is_retryable(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"text": "partial", "error_event": "boom", "cut_after": 2}])
    with pytest.raises(ProviderError) as error:
        await collect(provider, request(user_text("hi")))
    assert error.value.retryable


async def test_api_key_never_appears_in_errors(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.set_script([{"status": 401}, {"status": 500, "message": f"crashed near {KEY}"}])
    with pytest.raises(ProviderError) as auth:
        await collect(provider, request(user_text("hi")))
    assert KEY not in str(auth.value) and "OPENAI_API_KEY" in str(auth.value)
    with pytest.raises(ProviderError) as crash:
        await collect(provider, request(user_text("hi")))
    assert KEY not in str(crash.value) and crash.value.retryable


async def test_local_server_without_key_uses_placeholder(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    provider = make_provider("openai", default_model="llama")
    events = [e async for e in provider.stream(request(user_text("hi")))]
    assert isinstance(events[-1], MessageCompleted)
    assert server.requests[-1]["headers"]["authorization"] == "Bearer not-needed"
