"""The retry policy, with an injected sleep that records the delays."""

from __future__ import annotations

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
)
from peri_cli.base.retry import Retrying, backoff_delay, stream_with_retries, wait_text

REQUEST = ModelRequest(model="m", frozen_system="F", dynamic_system="", messages=[user_text("hi")])
DONE = MessageCompleted(
    message=Message(role="assistant", content=[TextPart(text="done")]),
    stop_reason="end_turn",
    usage=Usage(),
)


class Flaky:
    """Fails with the given errors in turn (after `partial` deltas each), then succeeds."""

    name = "flaky"

    def __init__(self, errors: list[ProviderError], partial: int = 0) -> None:
        self.errors = list(errors)
        self.partial = partial
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        for i in range(self.partial):
            yield TextDelta(f"part{i} ")
        if self.errors:
            raise self.errors.pop(0)
        yield TextDelta("done")
        yield DONE


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def overloaded(retry_after: float | None = None) -> ProviderError:
    return ProviderError("overloaded", retryable=True, retry_after=retry_after, status=529)


async def collect(provider: Flaky, sleep: Sleeps) -> list[StreamEvent | Retrying]:
    return [e async for e in stream_with_retries(provider, REQUEST, sleep=sleep)]


async def test_backoff_grows_and_retrying_events_are_emitted() -> None:
    sleep = Sleeps()
    provider = Flaky([overloaded(), overloaded(), StreamInterrupted(), overloaded()])
    events = await collect(provider, sleep)
    retrying = [e for e in events if isinstance(e, Retrying)]
    assert [e.attempt for e in retrying] == [2, 3, 4, 5]
    assert [e.delay for e in retrying] == sleep.delays
    assert retrying[2].reason == str(StreamInterrupted())
    assert sleep.delays == sorted(sleep.delays) and sleep.delays[-1] > sleep.delays[0]
    assert 0.5 <= sleep.delays[0] <= 1.0 and 4.0 <= sleep.delays[3] <= 8.0
    assert events[-1] == DONE and provider.calls == 5


async def test_retry_after_is_honoured() -> None:
    sleep = Sleeps()
    await collect(Flaky([overloaded(retry_after=12.5), overloaded(retry_after=0)]), sleep)
    assert sleep.delays == [12.5, 0.0]


async def test_gives_up_after_max_attempts_and_reraises() -> None:
    sleep = Sleeps()
    provider = Flaky([overloaded() for _ in range(10)])
    events: list[StreamEvent | Retrying] = []
    with pytest.raises(ProviderError, match="overloaded"):
        async for event in stream_with_retries(provider, REQUEST, max_attempts=3, sleep=sleep):
            events.append(event)
    assert provider.calls == 3 and len(sleep.delays) == 2
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2, 3]


async def test_non_retryable_errors_propagate_at_once() -> None:
    sleep = Sleeps()
    provider = Flaky([ProviderError("bad request", status=400)])
    with pytest.raises(ProviderError, match="bad request"):
        await collect(provider, sleep)
    assert provider.calls == 1 and sleep.delays == []


async def test_partial_deltas_are_followed_by_retrying() -> None:
    sleep = Sleeps()
    events = await collect(Flaky([overloaded()], partial=2), sleep)
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "TextDelta",
        "TextDelta",
        "Retrying",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "MessageCompleted",
    ]


def test_backoff_is_capped_and_jittered_within_the_upper_half() -> None:
    low = [backoff_delay(n, base_delay=1, max_delay=30, jitter=lambda: 0.0) for n in range(1, 9)]
    high = [backoff_delay(n, base_delay=1, max_delay=30, jitter=lambda: 1.0) for n in range(1, 9)]
    assert low == [0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]
    assert high == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


async def test_item17_a_long_retry_after_fails_at_once_saying_when() -> None:
    sleep = Sleeps()
    provider = Flaky([overloaded(retry_after=3600)])
    events: list[StreamEvent | Retrying] = []
    with pytest.raises(ProviderError) as error:
        async for event in stream_with_retries(provider, REQUEST, sleep=sleep, clock=lambda: 0.0):
            events.append(event)
    assert provider.calls == 1 and sleep.delays == [] and events == []
    message = str(error.value)
    assert message.startswith("overloaded") and "1 h" in message and "try again in 1 h" in message
    assert "(after " in message and not error.value.retryable
    assert error.value.retry_after == 3600 and error.value.status == 529


async def test_item17_the_cap_is_a_parameter_and_waits_within_it_are_kept() -> None:
    sleep = Sleeps()
    events = [
        e
        async for e in stream_with_retries(
            Flaky([overloaded(retry_after=60), overloaded(retry_after=90)]),
            REQUEST,
            sleep=sleep,
            max_wait=120,
        )
    ]
    assert sleep.delays == [60, 90] and events[-1] == DONE
    with pytest.raises(ProviderError, match="try again in 2 min"):
        async for _ in stream_with_retries(
            Flaky([overloaded(retry_after=90)]), REQUEST, sleep=sleep, max_wait=30
        ):
            pass


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.2, "1 s"),
        (45, "45 s"),
        (600, "10 min"),
        (3600, "1 h"),
        (12000, "3 h 20 min"),
        (3 * 86400, "3 days"),
        (1e300, "more than a year"),
        (float("inf"), "more than a year"),
    ],
)
def test_item17_waits_read_as_a_person_says_them(seconds: float, text: str) -> None:
    assert wait_text(seconds) == text


async def test_item17_huge_and_infinite_retry_after_fail_cleanly() -> None:
    for wait in (1e300, float("inf")):
        with pytest.raises(ProviderError, match="more than a year"):
            await collect(Flaky([overloaded(retry_after=wait)]), Sleeps())
