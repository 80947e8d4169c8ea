"""Misuse and timing (issue 40, items 1 and 7): every prompt ends with exactly one `result`,
whenever `interrupt()` comes; `events()` never hangs; a closed client and bad options are refused
with a `PeriError` naming what is wrong."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from peri_cli.sdk import AssistantEvent, PeriClient, PeriError, PeriOptions, ResultEvent
from tests.fakeserver import FakeServer
from tests.sdk.conftest import options_for

LONG = " ".join(f"word{i}" for i in range(200))


async def _drain(client: PeriClient, timeout: float = 10) -> list[Any]:
    async def read() -> list[Any]:
        return [e async for e in client.events()]

    return await asyncio.wait_for(read(), timeout)


def _results(events: list[Any]) -> list[ResultEvent]:
    return [e for e in events if isinstance(e, ResultEvent)]


async def _interrupted_at(client: PeriClient, when: str) -> list[Any]:
    """`send()`, then `interrupt()` at the moment `when` names; the prompt's events."""
    await client.send("go")
    if when == "at once":
        await client.interrupt()
        return await _drain(client)
    if when == "after one tick":
        await asyncio.sleep(0)
        await client.interrupt()
        return await _drain(client)
    seen: list[Any] = []

    async def read() -> None:
        async for event in client.events():
            seen.append(event)
            if when == "mid-stream" and event.type == "text_delta":
                await client.interrupt()

    await asyncio.wait_for(read(), 10)
    if when == "after the result":
        await client.interrupt()  # nothing runs: a no-op
    return seen


@pytest.mark.parametrize("when", ["at once", "after one tick", "mid-stream", "after the result"])
async def test_interrupt_at_any_time_ends_the_prompt_with_exactly_one_result(
    server: FakeServer, tmp_path: Path, when: str
) -> None:
    server.set_script([{"text": LONG, "delay": 0.02}, {"text": "second answer"}])
    options = options_for(server, tmp_path, include_partial_messages=True)
    async with PeriClient(options) as client:
        events = await _interrupted_at(client, when)
        (result,) = _results(events)
        assert events[-1] is result
        if when == "after the result":
            assert not result.is_error and result.subtype == "success"
        else:
            assert result.cancelled and result.is_error and result.error == "cancelled"
            assert result.subtype == "error_during_execution"
        assert await _drain(client, 2) == []  # nothing is left for events() to wait for
        await client.send("again")  # and the session goes on
        after = await _drain(client)
    (second,) = _results(after)
    assert not second.is_error
    assert any(isinstance(e, AssistantEvent) for e in after)


async def test_interrupt_twice_at_once_still_one_result(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": LONG, "delay": 0.02}])
    async with PeriClient(options_for(server, tmp_path)) as client:
        await client.send("go")
        await asyncio.gather(client.interrupt(), client.interrupt())
        (result,) = _results(await _drain(client))
    assert result.cancelled


async def test_events_with_nothing_running_returns_at_once(
    server: FakeServer, tmp_path: Path
) -> None:
    server.set_script([{"text": "one"}])
    async with PeriClient(options_for(server, tmp_path)) as client:
        assert await _drain(client, 2) == []  # before any prompt
        await client.send("first")
        assert len(_results(await _drain(client))) == 1
        assert await _drain(client, 2) == []  # after the prompt's result was read


async def test_send_after_close_is_a_clear_error(server: FakeServer, tmp_path: Path) -> None:
    server.set_script([{"text": "one"}])
    client = PeriClient(options_for(server, tmp_path))
    await client.connect()
    await client.close()
    with pytest.raises(PeriError, match="closed"):
        await client.send("hello")
    with pytest.raises(PeriError, match="closed"):
        await client.connect()
    assert await _drain(client, 2) == []
    assert not server.requests


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"permission_mode": "yolo"}, "permission_mode"),
        ({"permission_mode": "auto"}, "permission_mode"),
        ({"max_turns": "3"}, "max_turns"),
        ({"max_turns": 0}, "max_turns"),
        ({"max_turns": True}, "max_turns"),
        ({"cwd": "/no/such/folder/anywhere"}, "cwd"),
        ({"setting_sources": ["user", "everything"]}, "setting_sources"),
        ({"provider": "gemini"}, "provider"),
        ({"allowed_tools": "Bash"}, "allowed_tools"),
    ],
)
def test_bad_options_are_refused_when_built_naming_the_option(
    given: dict[str, Any], named: str
) -> None:
    with pytest.raises(PeriError, match=named) as caught:
        PeriOptions(**given)
    assert isinstance(caught.value, ValueError)  # an OptionError is both
    assert "\n" not in str(caught.value)


def test_a_file_as_cwd_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(PeriError, match=r"cwd.*not a directory"):
        PeriOptions(cwd=tmp_path / "a.txt")


def test_auto_is_refused_with_the_peri_mode_to_use() -> None:
    with pytest.raises(PeriError, match=r"'default'.*accept-edits"):
        PeriOptions(permission_mode="auto")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "mode"),
    [
        ("acceptEdits", "accept-edits"),
        ("bypassPermissions", "bypass"),
        ("accept-edits", "accept-edits"),
        ("plan", "plan"),
        ("dontAsk", "default"),
    ],
)
def test_claude_mode_names_are_accepted(given: str, mode: str) -> None:
    options = PeriOptions(permission_mode=given)  # type: ignore[arg-type]
    assert options.peri_mode == mode
