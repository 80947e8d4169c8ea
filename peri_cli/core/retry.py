"""Retry policy for model calls: exponential backoff with jitter, honouring retry-after.

A retry restarts the reply from scratch. Deltas of the failed attempt may already have been
yielded; the `Retrying` event that follows tells the consumer to discard that partial reply.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from peri_cli.core.provider import ModelRequest, Provider, ProviderError, StreamEvent


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


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    *,
    max_attempts: int = 5,
    base_delay: float = 1.0,
    max_delay: float = 30.0,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
) -> AsyncIterator[StreamEvent | Retrying]:
    """Re-yield the provider's events; on a retryable ProviderError yield Retrying, wait, try again.

    Non-retryable errors, and the error of the last attempt, propagate unchanged.
    """
    attempt = 1
    while True:
        events = provider.stream(request)
        try:
            async for event in events:
                yield event
            return
        except ProviderError as e:
            if not e.retryable or attempt >= max_attempts:
                raise
            delay = backoff_delay(
                attempt,
                base_delay=base_delay,
                max_delay=max_delay,
                retry_after=e.retry_after,
                jitter=jitter,
            )
            attempt += 1
            yield Retrying(attempt=attempt, delay=delay, reason=str(e), max_attempts=max_attempts)
            await sleep(delay)
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
