"""An assistant reply: Markdown that grows by appending fragments.

Streaming stays cheap however long the reply gets: fragments are batched to at most one redraw
per frame, only the last (still open) block is re-parsed and redrawn (an open code fence as plain
lines, each drawn once: it is highlighted when it closes), and closed blocks move into leaf
widgets that each hold many of them (`MarkdownChunk`), so the widget count stays small.

However fast text arrives, a flush draws new closed blocks for at most DRAW_BUDGET: the rest waits
for the next flush (the open block with it), so a frame's drawing stays bounded while the screen
catches up. When the stream ends (`finish`) everything left is drawn at once.
"""

from __future__ import annotations

import asyncio
import time

from textual.app import ComposeResult
from textual.timer import Timer
from textual.widget import Widget

from peri_cli.base.textsafe import visible
from peri_cli.tui.markdown.blocks import Block, line_offsets, parse
from peri_cli.tui.widgets.markdown_chunk import MarkdownChunk

FLUSH_INTERVAL = 1 / 30  # seconds: streamed text is drawn at most this often
DRAW_BUDGET = 0.008  # seconds a flush may spend drawing new closed blocks (at least one)
CHUNK_BLOCKS = 40  # closed blocks per sealed chunk widget


class AssistantMessage(Widget):
    DEFAULT_CSS = """
    AssistantMessage {
        height: auto;
        layout: vertical;
        margin: 1 0 0 0;
        padding: 0 1 0 2;
        color: $foreground;
    }
    AssistantMessage.-interrupted { border-left: thick $warning; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = visible(text)  # as shown: control characters visible (the record keeps it)
        self._sealed = 0  # text[:_sealed] is in closed blocks, drawn by the sealed chunks
        self._sealed_chunks: list[MarkdownChunk] = []
        self._last_sealed: Block | None = None
        self._pending: list[Block] = []  # closed blocks parsed but not drawn yet, in order
        self._live = MarkdownChunk()  # the blocks still open (the last one, while streaming)
        self._timer: Timer | None = None
        self._finished = False  # finish() was called: any later flush draws everything
        self._last_flush = 0.0

    def compose(self) -> ComposeResult:
        if self.text:  # a finished reply (a resumed session): all of it in one widget
            self._live.set_blocks(parse(self.text))
        yield self._live

    async def write(self, fragment: str) -> None:
        """Append streamed text; it is drawn on the next flush (at most every FLUSH_INTERVAL)."""
        self.text += visible(fragment)
        self._finished = False
        self._schedule()
        await asyncio.sleep(0)  # let the screen (and the keyboard) have the loop in between

    def _schedule(self) -> None:
        if self._timer is None and self.is_mounted:
            # (a Textual timer needs a delay above zero)
            delay = max(0.001, self._last_flush + FLUSH_INTERVAL - time.monotonic())
            self._timer = self.set_timer(delay, self._flush, name="flush")

    def _flush(self, *, everything: bool = False) -> None:
        """Draw what arrived: seal the closed blocks (within DRAW_BUDGET, unless `everything`),
        redraw the open one (its lines are drawn by the next frame's layout, so flushes between
        two frames cost one drawing)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        # (a timer's flush may still come after finish(): it must not open the last block again)
        everything = everything or self._finished
        self._last_flush = time.monotonic()
        new = len(self._sealed_chunks)
        blocks = self._split(self.text)
        ready = self._take(everything)
        if ready:
            self._seal(ready)
        for chunk in self._sealed_chunks[new:]:
            self.mount(chunk, before=self._live)
        if self._pending:  # still catching up: the open block comes after those
            self._live.set_blocks([], previous=self._last_sealed)
            self._schedule()
            return
        for block in blocks:
            block.open = not everything  # (a closed fence is highlighted, an open one not yet)
        self._live.set_blocks(blocks, previous=self._last_sealed)

    def _split(self, text: str) -> list[Block]:
        """Parse the unsealed part of `text`, queue its closed blocks to be drawn, return the
        open one."""
        tail = text[self._sealed :]
        blocks = parse(tail)
        if len(blocks) > 1:  # all but the last are closed: they can no longer change
            closed, blocks = blocks[:-1], blocks[-1:]
            starts = line_offsets(tail)
            self._sealed += starts[min(blocks[0].line, len(starts) - 1)]
            self._pending.extend(closed)
        return blocks

    def _take(self, everything: bool) -> list[Block]:
        """The queued closed blocks to draw now, each drawn ahead (at the width the reply has)
        until DRAW_BUDGET is spent (one if it has no width yet); all of them if `everything`."""
        if everything:
            ready, self._pending = self._pending, []
            return ready
        deadline = time.perf_counter() + DRAW_BUDGET
        count = 0
        while count < len(self._pending) and (count == 0 or time.perf_counter() < deadline):
            count += 1
            if not self._live.draw_ahead(self._pending[count - 1]):
                break  # not laid out yet: one block now (drawn by the layout), more next time
        ready, self._pending = self._pending[:count], self._pending[count:]
        return ready

    def _seal(self, closed: list[Block]) -> None:
        last = self._sealed_chunks[-1] if self._sealed_chunks else None
        if last is not None and len(last.blocks) + len(closed) <= CHUNK_BLOCKS:
            last.extend(closed)
        else:
            self._sealed_chunks.append(MarkdownChunk(closed, previous=self._last_sealed))
        self._last_sealed = closed[-1]

    async def finish(self) -> None:
        """The reply is complete (or stopped): draw everything now."""
        self._finished = True
        if self.is_mounted:
            self._flush(everything=True)

    async def finish_with(self, text: str) -> None:
        """End the stream; if the final text differs from what streamed, show the final text."""
        text = visible(text)
        if text and text != self.text:
            await self._reset(text)
        else:
            await self.finish()

    async def _reset(self, text: str) -> None:
        self.text = text
        self._sealed, self._last_sealed, self._pending = 0, None, []
        chunks, self._sealed_chunks = self._sealed_chunks, []
        if chunks:
            await self.remove_children(chunks)
        await self.finish()

    async def interrupt(self, note: str) -> None:
        self.add_class("-interrupted")
        self.text += f"\n\n*{note}*"
        await self.finish()
