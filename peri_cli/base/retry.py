"""Retry policy for model calls: exponential backoff with jitter, honouring retry-after.

A retry restarts the reply from scratch. Deltas of the failed attempt may already have been
yielded; the `Retrying` event that follows tells the consumer to discard that partial reply.
A server that asks for a longer wait than `max_wait` is not waited for: the call fails at once,
saying when to try again.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from peri_cli.base.provider import ModelRequest, Provider, ProviderError, StreamEvent

DEFAULT_MAX_WAIT = 60.0


@dataclass(frozen=True)
class Retrying:
    """Attempt `attempt` (2..max_attempts) starts in `delay` seconds; drop any partial reply."""

    attempt: int
    delay: float
    reason: str
    max_attempts: int = 5


def backoff_delay(
    failed_attempts: int,
    *,
    base_delay: float,
    max_delay: float,
    retry_after: float | None = None,
    jitter: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait after `failed_attempts` failures (1, 2, ...).

    The server's retry-after wins when given. Otherwise the cap doubles per failure and the delay
    is drawn from its upper half ("equal jitter"), so delays never shrink from one try to the next.
    """
    if retry_after is not None:
        return max(0.0, retry_after)
    cap = min(max_delay, base_delay * 2.0 ** (failed_attempts - 1))
    return float(cap / 2 + jitter() * cap / 2)


def wait_text(seconds: float) -> str:
    """A wait as a person says it: `45 s`, `12 min`, `1 h`, `3 h 20 min`, `2 days`."""
    if not math.isfinite(seconds) or seconds >= 2 * 86400:
        days = seconds / 86400 if math.isfinite(seconds) else math.inf
        return "more than a year" if days > 365 else f"{round(days)} days"
    if seconds < 90:
        return f"{max(1, math.ceil(seconds))} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h" + (f" {rest} min" if rest else "")


def too_long_a_wait(
    error: ProviderError, wait: float, max_wait: float, now: float
) -> ProviderError:
    """The clean failure for a wait longer than Peri will make: it says when to try again."""
    when = f"in {wait_text(wait)}"
    if wait < 86400:
        when += time.strftime(" (after %H:%M)", time.localtime(now + wait))
    return ProviderError(
        f"{error} — the server asks to wait {wait_text(wait)} before retrying, longer than "
        f"Peri waits ({wait_text(max_wait)}); try again {when}",
        retryable=False,
        retry_after=wait,
        status=error.status,
    )


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    *,
    max_attempts: int = 5,
    base_delay: float = 1.0,
    max_delay: float = 30.0,
    max_wait: float = DEFAULT_MAX_WAIT,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
    clock: Callable[[], float] = time.time,
) -> AsyncIterator[StreamEvent | Retrying]:
    """Re-yield the provider's events; on a retryable ProviderError yield Retrying, wait, try again.

    Non-retryable errors, and the error of the last attempt, propagate unchanged; a retry-after
    beyond `max_wait` seconds fails at once with a message saying when to try again.
    """
    attempt = 1
    while True:
        events = provider.stream(request)
        try:
            async for event in events:
                yield event
            return
        except ProviderError as e:
            if not e.retryable:
                raise
            asked = None if e.retry_after is None or math.isnan(e.retry_after) else e.retry_after
            if asked is not None and asked > max_wait:
                raise too_long_a_wait(e, asked, max_wait, clock()) from e
            if attempt >= max_attempts:
                raise
            delay = backoff_delay(
                attempt,
                base_delay=base_delay,
                max_delay=max_delay,
                retry_after=asked,
                jitter=jitter,
            )
            attempt += 1
            yield Retrying(attempt=attempt, delay=delay, reason=str(e), max_attempts=max_attempts)
            await sleep(delay)
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
