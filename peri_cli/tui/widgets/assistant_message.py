"""An assistant reply: Markdown that grows by appending fragments, never re-rendered whole."""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownStream


class AssistantMessage(Markdown):
    DEFAULT_CSS = """
    AssistantMessage {
        margin: 1 0 0 0;
        padding: 0 1 0 2;
        background: transparent;
    }
    AssistantMessage > MarkdownBlock:last-child { margin-bottom: 0; }
    AssistantMessage.-interrupted { border-left: thick $warning; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self.text = text
        self._stream: MarkdownStream | None = None

    async def write(self, fragment: str) -> None:
        """Append streamed text; fragments that arrive faster than a render are batched."""
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self.text += fragment
        await self._stream.write(fragment)

    async def finish(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def finish_with(self, text: str) -> None:
        """End the stream; if the final text differs from what streamed, show the final text."""
        await self.finish()
        if text and text != self.text:
            self.text = text
            await self.update(text)

    async def interrupt(self, note: str) -> None:
        await self.finish()
        self.add_class("-interrupted")
        await self.append(f"\n\n*{note}*")
