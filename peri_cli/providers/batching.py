"""Stream events in batches: what arrived while the consumer was busy is handed over at once,
with consecutive text (and thinking) deltas joined into one.

A face that draws at most once a frame gains nothing from 500 one-word deltas per frame, and
pays for each (an event through the loop, the SubAgent queue, the bridge). Joining keeps the
order and every character: only the boundaries between deltas of the same kind go.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from peri_cli.base.provider import StreamEvent, TextDelta, ThinkingDelta


@dataclass(frozen=True)
class StreamEnd:
    """The producer is done: `error` (raised to the consumer) or None for a clean end."""

    error: BaseException | None = None


Item = StreamEvent | StreamEnd


def coalesce(items: Iterable[Item]) -> list[Item]:
    """`items` in order, each run of TextDeltas (or of ThinkingDeltas) joined into one."""
    out: list[Item] = []
    run: list[str] = []
    kind: type[TextDelta] | type[ThinkingDelta] | None = None
    for item in items:
        if isinstance(item, TextDelta | ThinkingDelta):
            if type(item) is not kind and run:
                assert kind is not None
                out.append(kind("".join(run)))
                run = []
            kind = type(item)
            run.append(item.text)
            continue
        if run:
            assert kind is not None
            out.append(kind("".join(run)))
            run, kind = [], None
        out.append(item)
    if run:
        assert kind is not None
        out.append(kind("".join(run)))
    return out


class Inbox:
    """Items put from any thread, taken in batches on the consumer's event loop. The consumer's
    loop is woken once per batch (when the first item of an empty inbox arrives), not per item."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, join: bool = True) -> None:
        self._loop = loop
        self._join = join  # False: every delta as it came (the SDK's and `-p`'s promise)
        self._items: list[Item] = []
        self._lock = threading.Lock()
        self._ready = asyncio.Event()  # touched only on the consumer's loop

    def put(self, item: Item) -> None:
        with self._lock:
            self._items.append(item)
            first = len(self._items) == 1
        if first:  # (a closed consumer loop raises: nobody is left to read it)
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._ready.set)

    async def take(self) -> list[Item]:
        """Everything put since the last take (waits for at least one item), coalesced."""
        while True:
            with self._lock:
                items, self._items = self._items, []
                if not items:
                    self._ready.clear()
            if items:
                return coalesce(items) if self._join else items
            await self._ready.wait()
