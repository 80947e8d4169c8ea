"""Reading a whole provider stream in tests."""

from __future__ import annotations

from peri_cli.base.provider import MessageCompleted, ModelRequest, Provider, StreamEvent


async def collect(
    provider: Provider, req: ModelRequest
) -> tuple[list[StreamEvent], MessageCompleted]:
    """The deltas, and the one MessageCompleted that must close the stream."""
    events = [e async for e in provider.stream(req)]
    last = events[-1]
    assert isinstance(last, MessageCompleted)
    assert not any(isinstance(e, MessageCompleted) for e in events[:-1])
    return events[:-1], last
