"""AnthropicProvider through the real `anthropic` SDK against the loopback fake server."""

from __future__ import annotations

from pathlib import Path

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
from peri_cli.base.retry import Retrying, stream_with_retries
from peri_cli.providers.anthropic.provider import AnthropicProvider
from peri_cli.providers.anthropic.request import build_params, count_breakpoints
from peri_cli.providers.common import RAW_INPUT_KEY
from peri_cli.providers.factory import make_provider
from tests.fakeserver import FakeServer
from tests.providers.streams import collect

KEY = "sk-ant-FAKE-KEY-do-not-leak-4242"
FROZEN = "You are Peri.\nFrozen base prompt — bytes that never change."
READ = ToolSpec(
    "Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)


@pytest.fixture
def provider(server: FakeServer) -> AnthropicProvider:
    return AnthropicProvider("claude-test", api_key=KEY, base_url=server.url)


def request(
    *messages: Message, dynamic: str = "", tools: list[ToolSpec] | None = None
) -> ModelRequest:
    return ModelRequest(
        model="claude-test",
        frozen_system=FROZEN,
        dynamic_system=dynamic,
        messages=list(messages),
        tools=tools or [],
    )


async def test_text_streams_word_by_word(server: FakeServer, provider: AnthropicProvider) -> None:
    server.set_script([{"text": "Hello there, world"}])
    deltas, done = await collect(provider, request(user_text("hi")))
    assert [e.text for e in deltas if isinstance(e, TextDelta)] == ["Hello ", "there, ", "world"]
    assert done.message == Message(role="assistant", content=[TextPart(text="Hello there, world")])
    assert done.stop_reason == "end_turn"
    [call] = server.requests
    assert call["path"] == "/v1/messages"
    assert call["body"]["stream"] is True
    # anthropic 2.x sends the key as a bearer token, not as x-api-key
    assert call["headers"]["authorization"] == f"Bearer {KEY}"
    assert call["headers"]["x-stainless-retry-count"] == "0"


async def test_tool_use_round_trip_passes_validation(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script(
        [{"text": "Reading.", "tool_calls": [{"name": "Read", "input": {"path": "a.py"}}]}]
    )
    first = request(user_text("read a.py"), tools=[READ])
    deltas, done = await collect(provider, first)
    [use] = done.message.tool_uses
    assert use.name == "Read" and use.input == {"path": "a.py"}
    assert ToolUseStarted(id=use.id, name="Read") in deltas
    assert done.stop_reason == "tool_use"

    answer = Message(role="user", content=[tool_result(use.id, "print('a')")])
    history = [user_text("read a.py"), done.message, answer]
    _, second = await collect(provider, request(*history, tools=[READ]))
    assert second.message.text == "ok"
    body = server.requests[-1]["body"]
    assert server.requests[-1]["status"] == 200
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": use.id,
        "name": "Read",
        "input": {"path": "a.py"},
    }
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == use.id
    assert result["content"] == [{"type": "text", "text": "print('a')"}]
    assert body["tools"] == [
        {"name": "Read", "description": "Read a file", "input_schema": READ.input_schema}
    ]


async def test_thinking_signature_round_trips_byte_identical(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    thinking = "Let me think…  carefully,\nstep by step."
    signature = "EqQBCkgIARABGAIiQL+/sig==\u00e9"
    server.set_script([{"thinking": thinking, "signature": signature, "text": "Done."}])
    deltas, done = await collect(provider, request(user_text("think")))
    assert "".join(e.text for e in deltas if isinstance(e, ThinkingDelta)) == thinking
    part = done.message.content[0]
    assert part == ThinkingPart(thinking=thinking, signature=signature)

    await collect(provider, request(user_text("think"), done.message, user_text("again")))
    sent = server.requests[-1]["body"]["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": thinking, "signature": signature}


async def test_unsigned_thinking_is_dropped_and_redacted_sent_back(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script([{"redacted_thinking": "ENCRYPTED-BLOB", "text": "Hi."}])
    _, done = await collect(provider, request(user_text("x")))
    assert done.message.content[0] == ThinkingPart(
        thinking="", signature="ENCRYPTED-BLOB", redacted=True
    )
    unsigned = Message(
        role="assistant",
        content=[ThinkingPart(thinking="local musing"), TextPart(text="Earlier.")],
    )
    history = [user_text("a"), unsigned, user_text("b"), done.message, user_text("c")]
    await collect(provider, request(*history))
    sent = server.requests[-1]["body"]["messages"]
    assert sent[1]["content"] == [{"type": "text", "text": "Earlier."}]
    assert sent[3]["content"][0] == {"type": "redacted_thinking", "data": "ENCRYPTED-BLOB"}


async def test_usage_maps_cache_read_and_creation(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    usage = {
        "input_tokens": 12,
        "output_tokens": 34,
        "cache_read_input_tokens": 5000,
        "cache_creation_input_tokens": 700,
    }
    server.set_script([{"text": "cached", "usage": usage}])
    _, done = await collect(provider, request(user_text("hi")))
    assert done.usage.model_dump() == usage


async def test_breakpoints_on_frozen_system_and_last_message(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    use = ToolUsePart(id="toolu_1", name="Read", input={"path": "x"})
    image = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        user_text("one"),
        Message(role="assistant", content=[TextPart(text="calling"), use]),
        Message(
            role="user",
            content=[ToolResultPart(tool_use_id="toolu_1", content=[TextPart(text="x"), image])],
        ),
        Message(role="assistant", content=[TextPart(text="seen")]),
        Message(role="user", content=[TextPart(text="two"), TextPart(text="three")]),
    ]
    req = request(*history, dynamic="<git>main, clean</git>", tools=[READ])
    await collect(provider, req)
    body = server.requests[-1]["body"]
    assert server.requests[-1]["status"] == 200
    assert body["system"] == [
        {"type": "text", "text": FROZEN, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "<git>main, clean</git>"},
    ]
    last = body["messages"][-1]["content"]
    assert last[-1] == {"type": "text", "text": "three", "cache_control": {"type": "ephemeral"}}
    assert "cache_control" not in last[0]
    assert count_breakpoints(body) == 2
    assert body["messages"][2]["content"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }


def test_no_dynamic_block_when_empty_and_breakpoints_never_exceed_four() -> None:
    reply = Message(role="assistant", content=[TextPart(text="r")])
    many = [user_text(f"m{i}") if i % 2 == 0 else reply for i in range(41)]
    params = build_params(request(*many))
    assert params["system"] == [
        {"type": "text", "text": FROZEN, "cache_control": {"type": "ephemeral"}}
    ]
    assert count_breakpoints(params) == 2


async def test_529_and_429_are_retryable_with_retry_after(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script([{"status": 529, "retry_after": 2}, {"status": 429, "retry_after": "7"}])
    with pytest.raises(ProviderError) as overloaded:
        await collect(provider, request(user_text("hi")))
    assert overloaded.value.retryable and overloaded.value.retry_after == 2.0
    assert overloaded.value.status == 529 and "overloaded_error" in str(overloaded.value)
    with pytest.raises(ProviderError) as limited:
        await collect(provider, request(user_text("hi")))
    assert limited.value.retryable and limited.value.retry_after == 7.0
    assert limited.value.status == 429


async def test_400_is_not_retryable(server: FakeServer, provider: AnthropicProvider) -> None:
    server.set_script([{"status": 400, "message": "prompt is too long: 210000 tokens > 200000"}])
    with pytest.raises(ProviderError) as error:
        await collect(provider, request(user_text("hi")))
    assert not error.value.retryable and error.value.status == 400
    assert "prompt is too long" in str(error.value)


async def test_unanswered_tool_use_is_rejected_by_server_and_not_retryable(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    use = ToolUsePart(id="toolu_lost", name="Read", input={})
    history = [user_text("a"), Message(role="assistant", content=[use]), user_text("b")]
    with pytest.raises(ProviderError) as error:
        await collect(provider, request(*history))
    assert error.value.status == 400 and not error.value.retryable
    assert "toolu_lost" in str(error.value)


async def test_cut_stream_raises_stream_interrupted(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script(
        [
            {"text": "one two three four", "cut_after": 5},
            {"text": "one two three four", "cut_after": 8, "graceful": True},
        ]
    )
    for _ in range(2):
        seen: list[StreamEvent] = []
        with pytest.raises(StreamInterrupted) as error:
            async for event in provider.stream(request(user_text("hi"))):
                seen.append(event)
        assert error.value.retryable
        assert any(isinstance(e, TextDelta) for e in seen)
        assert not any(isinstance(e, MessageCompleted) for e in seen)


async def test_error_event_inside_stream_maps_to_retryable(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script(
        [{"text": "partial reply", "error_event": "overloaded_error", "cut_after": 4}]
    )
    with pytest.raises(ProviderError) as error:
        await collect(provider, request(user_text("hi")))
    assert error.value.retryable and error.value.status == 529


async def test_malformed_tool_arguments_do_not_crash(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script([{"tool_calls": [{"name": "Read", "raw_arguments": '{"path": "a.py'}]}])
    _, done = await collect(provider, request(user_text("hi"), tools=[READ]))
    [use] = done.message.tool_uses
    assert use.input == {RAW_INPUT_KEY: '{"path": "a.py'}
    answer = Message(
        role="user", content=[tool_result(use.id, "invalid tool input JSON", is_error=True)]
    )
    await collect(provider, request(user_text("hi"), done.message, answer, tools=[READ]))
    assert server.requests[-1]["status"] == 200
    assert server.requests[-1]["body"]["messages"][2]["content"][0]["is_error"] is True


async def test_api_key_never_appears_in_errors(server: FakeServer) -> None:
    provider = AnthropicProvider(api_key=KEY, base_url=server.url)
    server.set_script([{"status": 401}, {"status": 400, "message": f"bad header {KEY}"}])
    with pytest.raises(ProviderError) as auth:
        await collect(provider, request(user_text("hi")))
    assert server.requests[-1]["status"] == 401  # the fake echoed the key back in its body
    assert KEY in str(server.requests[-1]["headers"])
    assert KEY not in str(auth.value) and "ANTHROPIC_API_KEY" in str(auth.value)
    assert not auth.value.retryable and auth.value.status == 401
    with pytest.raises(ProviderError) as bad:
        await collect(provider, request(user_text("hi")))
    assert KEY not in str(bad.value) and "bad header ***" in str(bad.value)


async def test_connection_refused_is_retryable() -> None:
    with FakeServer() as srv:
        url = srv.url
    provider = AnthropicProvider(api_key=KEY, base_url=url)
    with pytest.raises(ProviderError) as error:
        await collect(provider, request(user_text("hi")))
    assert error.value.retryable and KEY not in str(error.value)


async def test_environment_variables_and_make_provider(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    provider = make_provider("anthropic")
    assert provider.name == "anthropic"
    server.set_script([{"text": "from env"}])
    events = [e async for e in provider.stream(request(user_text("hi")))]
    assert isinstance(events[-1], MessageCompleted) and events[-1].message.text == "from env"
    assert server.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}"


async def test_retry_policy_over_the_wire(server: FakeServer, provider: AnthropicProvider) -> None:
    server.set_script([{"status": 529, "times": 2, "retry_after": 0}, {"text": "finally"}])
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    events = [e async for e in stream_with_retries(provider, request(user_text("hi")), sleep=sleep)]
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2, 3]
    assert delays == [0.0, 0.0]
    assert isinstance(events[-1], MessageCompleted) and events[-1].message.text == "finally"
    assert [r["status"] for r in server.requests] == [529, 529, 200]


async def test_missing_credentials_is_a_clear_error(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))  # no profile on disk either
    provider = AnthropicProvider(base_url=server.url)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY") as error:
        await collect(provider, request(user_text("hi")))
    assert not error.value.retryable and server.requests == []


async def no_sleep(_seconds: float) -> None:
    pass


async def test_item10_invalid_json_in_stream_is_retried(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script([{"text": "one two three", "invalid_json_at": 4}])
    with pytest.raises(StreamInterrupted) as error:
        await collect(provider, request(user_text("hi")))
    assert error.value.retryable and "JSON" in str(error.value)
    server.set_script([{"text": "one two three", "invalid_json_at": 4}, {"text": "recovered"}])
    events = [
        e async for e in stream_with_retries(provider, request(user_text("hi")), sleep=no_sleep)
    ]
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2]
    assert isinstance(events[-1], MessageCompleted) and events[-1].message.text == "recovered"


@pytest.mark.parametrize("data", ["42", "[1, 2]", "null", '{"type": "message_delta"}'])
async def test_item10_an_event_of_the_wrong_shape_is_a_dropped_stream(
    server: FakeServer, provider: AnthropicProvider, data: str
) -> None:
    server.set_script([{"text": "a b", "invalid_json_at": 4, "bad_data": data}])
    with pytest.raises(StreamInterrupted):
        await collect(provider, request(user_text("hi")))


async def test_item10_invalid_json_every_time_fails_cleanly(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script([{"text": "x y", "invalid_json_at": 2}] * 3)
    with pytest.raises(ProviderError) as error:
        async for _ in stream_with_retries(
            provider, request(user_text("hi")), max_attempts=3, sleep=no_sleep
        ):
            pass
    assert "JSON" in str(error.value) and len(server.requests) == 3


async def test_item17_an_hour_long_retry_after_fails_at_once(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script([{"status": 429, "retry_after": 3600}, {"text": "too late"}])
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    with pytest.raises(ProviderError) as error:
        async for _ in stream_with_retries(provider, request(user_text("hi")), sleep=sleep):
            pass
    assert delays == [] and len(server.requests) == 1
    assert "429" in str(error.value) and "try again in 1 h" in str(error.value)


async def test_issue10_a_stream_without_usage_reports_none(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_script([{"text": "no usage here", "no_usage": True}])
    _, done = await collect(provider, request(user_text("hi")))
    assert done.usage is None and done.message.text == "no usage here"


async def test_issue10_model_list_is_asked_once_and_knows_the_aliases(
    server: FakeServer, provider: AnthropicProvider
) -> None:
    server.set_models(["claude-sonnet-4-5-20250929", "claude-sonnet-4-20250514", "claude-x"])
    models = await provider.list_models()
    assert models is not None and models[:3] == [
        "claude-sonnet-4-5-20250929",
        "claude-sonnet-4-20250514",
        "claude-x",
    ]
    assert {"claude-sonnet-4-5", "claude-sonnet-4-0", "claude-sonnet-4-5-latest"} <= set(models)
    assert await provider.list_models() == models
    asked = [r for r in server.requests if r["path"].startswith("/v1/models")]
    assert len(asked) == 1 and "anthropic-version" in asked[0]["headers"]


async def test_issue10_no_list_or_no_server_gives_none(server: FakeServer) -> None:
    server.set_models(None)
    assert await AnthropicProvider(api_key=KEY, base_url=server.url).list_models() is None
    with FakeServer() as gone:
        url = gone.url
    assert await AnthropicProvider(api_key=KEY, base_url=url).list_models() is None


PASSWORD = "hunter2-PWD-7731"


async def test_item6_password_in_base_url_is_never_shown(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_password = server.url.replace("http://", f"http://peri:{PASSWORD}@")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", with_password)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    provider = make_provider("anthropic")
    server.set_script(
        [
            {"status": 500, "message": f"upstream {with_password}/v1/messages failed"},
            {"status": 400, "message": f"wrong password {PASSWORD}"},
        ]
    )
    for _ in range(2):
        with pytest.raises(ProviderError) as error:
            await collect(provider, request(user_text("hi")))
        assert PASSWORD not in str(error.value)
    with FakeServer() as gone:
        dead = gone.url.replace("http://", f"http://peri:{PASSWORD}@")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", dead)
    with pytest.raises(ProviderError) as unreachable:
        await collect(make_provider("anthropic"), request(user_text("hi")))
    message = str(unreachable.value)
    assert PASSWORD not in message and "could not reach" in message and "***@127.0.0.1" in message


@pytest.mark.parametrize(
    "url",
    [
        f"http://u:{PASSWORD}@127.0.0.1:99999/",
        f"http://u:{PASSWORD}@[::1/",
        f"ftp://u:{PASSWORD}@host/",
        "http://u:hunter2/PWD-7731@127.0.0.1:1/",
    ],
)
async def test_item6_an_unusable_base_url_is_one_clear_line_without_its_password(url: str) -> None:
    provider = AnthropicProvider(api_key=KEY, base_url=url)
    with pytest.raises(ProviderError) as error:
        await collect(provider, request(user_text("hi")))
    message = str(error.value)
    assert "ANTHROPIC_BASE_URL" in message and "not a usable URL" in message
    assert "hunter2" not in message and "\n" not in message and not error.value.retryable
    assert await provider.list_models() is None
