"""Cache breakpoints the core asks for (the last message Micro left unchanged) reach the wire."""

from __future__ import annotations

from peri_cli.base.messages import Message, TextPart, ThinkingPart, user_text
from peri_cli.base.provider import ModelRequest
from peri_cli.providers.anthropic.request import build_params, count_breakpoints
from tests.fakeserver import validate_anthropic


def said(text: str) -> Message:
    return Message(role="assistant", content=[TextPart(text=text)])


def marked(params: dict[str, object]) -> list[int]:
    messages = params["messages"]
    assert isinstance(messages, list)
    return [
        i
        for i, m in enumerate(messages)
        if any("cache_control" in b for b in m["content"])  # type: ignore[index]
    ]


def test_a_mark_adds_a_breakpoint_and_the_body_stays_valid() -> None:
    messages = [user_text("a"), said("b"), user_text("c"), said("d"), user_text("e")]
    request = ModelRequest("m", "frozen", "", messages, cache_marks=(2,))
    params = build_params(request)
    assert marked(params) == [2, 4]
    assert count_breakpoints(params) == 3
    assert validate_anthropic({**params, "stream": True}) is None
    assert marked(build_params(ModelRequest("m", "frozen", "", messages))) == [4]


def test_marks_never_exceed_the_four_breakpoints_and_skip_thinking() -> None:
    thinking = Message(
        role="assistant",
        content=[TextPart(text="x"), ThinkingPart(thinking="t", signature="s")],
    )
    messages = [user_text("a"), thinking, user_text("c"), said("d"), user_text("e")]
    params = build_params(ModelRequest("m", "frozen", "", messages, cache_marks=(0, 1, 2, 3)))
    assert count_breakpoints(params) == 4 and marked(params) == [2, 3, 4]  # the newest marks
    params = build_params(ModelRequest("m", "frozen", "", messages, cache_marks=(1,)))
    blocks = params["messages"][1]["content"]  # type: ignore[index]
    assert "cache_control" in blocks[0] and "cache_control" not in blocks[1]
