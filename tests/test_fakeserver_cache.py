"""The fake server's opt-in prompt-cache accounting follows Anthropic's prefix rules."""

from __future__ import annotations

import json
from typing import Any

from tests.fakeserver import CACHE_LOOKBACK, FakeServer
from tests.test_fakeserver import anthropic

BIG = "x " * 3000  # ~1,500 tokens: over the minimum cacheable length on its own
MARK = {"type": "ephemeral"}


def system(text: str = BIG) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "cache_control": MARK}]


def user(text: str, *, mark: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if mark:
        block["cache_control"] = MARK
    return {"role": "user", "content": [block]}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def usage_of(srv: FakeServer) -> dict[str, int]:
    return srv.requests[-1]["usage"]


def total(u: dict[str, int]) -> int:
    return u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]


def test_off_by_default_and_usage_is_recorded() -> None:
    with FakeServer() as srv:
        anthropic(srv, [user("hi", mark=True)], system=system())
        anthropic(srv, [user("hi", mark=True)], system=system())
        u = usage_of(srv)
        assert u["cache_read_input_tokens"] == 0 and u["cache_creation_input_tokens"] == 0


def test_a_breakpoint_writes_and_the_same_prefix_is_read_back() -> None:
    with FakeServer(cache=True) as srv:
        first = [user("hello " + BIG, mark=True)]
        status, _, body = anthropic(srv, first, system=system())
        assert status == 200
        u1 = usage_of(srv)
        assert u1["cache_read_input_tokens"] == 0 and u1["cache_creation_input_tokens"] > 1500
        # The reply reports the same figures it recorded.
        assert (
            json.loads(body)["usage"]["cache_creation_input_tokens"]
            == (u1["cache_creation_input_tokens"])
        )
        second = [user("hello " + BIG), said("ok"), user("more", mark=True)]
        anthropic(srv, second, system=system())
        u2 = usage_of(srv)
        assert u2["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
        assert 0 < u2["cache_creation_input_tokens"] < 50
        assert total(u2) == len(json.dumps(srv.requests[-1]["body"])) // 4  # parts add up
        # A changed early message invalidates everything after the system prompt.
        changed = [user("HELLO " + BIG), said("ok"), user("more", mark=True)]
        anthropic(srv, changed, system=system())
        u3 = usage_of(srv)
        assert u3["cache_read_input_tokens"] < 1600  # only the system prompt
        assert u3["cache_creation_input_tokens"] > 1500


def test_tools_and_system_come_before_the_messages() -> None:
    tool = {"name": "Read", "description": "reads " * 10, "input_schema": {"type": "object"}}
    with FakeServer(cache=True) as srv:
        anthropic(srv, [user("a", mark=True)], system=system(), tools=[tool])
        anthropic(srv, [user("a", mark=True)], system=system(), tools=[tool])
        assert usage_of(srv)["cache_read_input_tokens"] > 1500
        other = {**tool, "description": "changed"}
        anthropic(srv, [user("a", mark=True)], system=system(), tools=[other])
        assert usage_of(srv)["cache_read_input_tokens"] == 0  # the prefix changed at byte 0


def test_short_prefixes_are_not_cached() -> None:
    with FakeServer(cache=True) as srv:
        anthropic(srv, [user("hi", mark=True)], system=system("short"))
        anthropic(srv, [user("hi", mark=True)], system=system("short"))
        u = usage_of(srv)
        assert u["cache_read_input_tokens"] == 0 and u["cache_creation_input_tokens"] == 0


def test_reads_look_back_at_most_twenty_blocks_from_a_breakpoint() -> None:
    history: list[dict[str, Any]] = [user("start " + BIG, mark=True)]
    with FakeServer(cache=True) as srv:
        anthropic(srv, history, system=system())
        history[0] = user("start " + BIG)
        for k in range(CACHE_LOOKBACK // 2 + 1):  # 22 more blocks: past the lookback
            history += [said(f"a{k}"), user(f"u{k}")]
        history[-1] = user("last", mark=True)
        anthropic(srv, history, system=system())
        near = usage_of(srv)["cache_read_input_tokens"]
        assert near < 1600  # the message prefix written above is out of reach
        # With a second breakpoint at the old end, the same prefix is found.
        history[0] = user("start " + BIG, mark=True)
        anthropic(srv, history, system=system())
        assert usage_of(srv)["cache_read_input_tokens"] > 3000
