"""The shipped deterministic provider."""

from __future__ import annotations

import pytest

from peri_cli.base.messages import TextPart, ThinkingPart, ToolUsePart, Usage, user_text
from peri_cli.base.provider import (
    MessageCompleted,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolUseStarted,
)
from peri_cli.providers.factory import make_provider
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply


def request(text: str = "hi") -> ModelRequest:
    return ModelRequest(model="m", frozen_system="F", dynamic_system="", messages=[user_text(text)])


async def run(provider: ScriptedProvider, req: ModelRequest) -> list[StreamEvent]:
    return [e async for e in provider.stream(req)]


async def test_streams_word_by_word_and_records_requests() -> None:
    provider = ScriptedProvider([ScriptedReply(text="Hello  there\nworld", thinking="hmm yes")])
    req = request()
    events = await run(provider, req)
    assert [e for e in events if isinstance(e, ThinkingDelta)] == [
        ThinkingDelta("hmm "),
        ThinkingDelta("yes"),
    ]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello  ", "there\n", "world"]
    done = events[-1]
    assert isinstance(done, MessageCompleted) and done.stop_reason == "end_turn"
    assert done.message.content == [
        ThinkingPart(thinking="hmm yes", signature="scripted-signature"),
        TextPart(text="Hello  there\nworld"),
    ]
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    assert provider.requests == [req]


async def test_tool_calls_usage_and_default_reply_when_exhausted() -> None:
    usage = Usage(input_tokens=3, output_tokens=4, cache_read_input_tokens=5)
    provider = ScriptedProvider(
        [
            ScriptedReply(
                tool_calls=[ScriptedCall("Read", {"path": "a"}), ScriptedCall("Bash")], usage=usage
            )
        ]
    )
    events = await run(provider, request())
    assert [e for e in events if isinstance(e, ToolUseStarted)] == [
        ToolUseStarted("toolu_scripted_1", "Read"),
        ToolUseStarted("toolu_scripted_2", "Bash"),
    ]
    done = events[-1]
    assert isinstance(done, MessageCompleted)
    assert done.stop_reason == "tool_use" and done.usage == usage
    assert done.message.content == [
        ToolUsePart(id="toolu_scripted_1", name="Read", input={"path": "a"}),
        ToolUsePart(id="toolu_scripted_2", name="Bash", input={}),
    ]
    again = (await run(provider, request()))[-1]
    assert isinstance(again, MessageCompleted) and again.message.text == "ok"
    assert len(provider.requests) == 2


async def test_errors_and_callable_replies() -> None:
    provider = ScriptedProvider(
        [
            ScriptedReply(error=ProviderError("overloaded", retryable=True, status=529)),
            lambda req: ScriptedReply(text=f"echo {req.messages[-1].text}"),
        ]
    )
    with pytest.raises(ProviderError, match="overloaded"):
        await run(provider, request())
    done = (await run(provider, request("ping")))[-1]
    assert isinstance(done, MessageCompleted) and done.message.text == "echo ping"


def test_make_provider_knows_the_names() -> None:
    assert make_provider("scripted").name == "scripted"
    assert make_provider("openai", api_key="k").name == "openai"
    with pytest.raises(ValueError, match="unknown provider"):
        make_provider("nope")


async def test_issue10_model_list_is_asked_once_and_usage_can_be_withheld() -> None:
    listed = ScriptedProvider(models=["a", "b"])
    assert await listed.list_models() == ["a", "b"]
    assert await listed.list_models() == ["a", "b"] and listed.model_list_asks == 1
    assert await ScriptedProvider().list_models() is None
    events = await run(ScriptedProvider([ScriptedReply(text="x", report_usage=False)]), request())
    assert isinstance(events[-1], MessageCompleted) and events[-1].usage is None
