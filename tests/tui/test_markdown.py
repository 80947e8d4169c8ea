"""Replies drawn as lines (`tui/markdown/`): a streamed reply looks exactly like the same
text shown at once, and its widget count stays small however long it gets."""

from __future__ import annotations

import random

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.strip import Strip

from peri_cli.tui.markdown.blocks import line_offsets, parse
from peri_cli.tui.widgets.assistant_message import CHUNK_BLOCKS, AssistantMessage
from peri_cli.tui.widgets.markdown_chunk import MarkdownChunk

from .harness import until

REPLY = """## Plan

The failing test is `test_parse_empty`: `parse("")` raises. **Bold**, *italic*, ~~struck~~ and
[a link](https://example.com).

```python
def parse(text: str) -> list[Token]:
    if not text.strip():
        return []
    return list(tokenize(text))
```

- first item with `code`
- second item, long enough to wrap around the edge of the pane so that we see the hanging indent
  - nested item
- third

1. one
2. two

> A quote with **bold**
> and more.

# Big heading

### Small heading

---

| col | other column |
|-----|--------------|
| a   | b            |

Setext heading
--------------

<div>raw html</div>

Final paragraph."""


def lines_of(message: AssistantMessage) -> list[Strip]:
    out: list[Strip] = []
    for chunk in message.query(MarkdownChunk):
        out += chunk.lines(chunk.size.width)
    return out


class Host(App[None]):
    def __init__(self, *messages: AssistantMessage) -> None:
        super().__init__()
        self.messages = messages

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield from self.messages


def fragments(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        n = rng.choice((1, 2, 3, 5, 8, 20, 60))
        out.append(text[i : i + n])
        i += n
    return out


async def test_streamed_reply_looks_like_the_whole_text() -> None:
    text = "\n\n".join([REPLY] * 6)
    whole, streamed = AssistantMessage(text), AssistantMessage()
    app = Host(whole, streamed)
    async with app.run_test(size=(90, 40)) as pilot:
        for i, fragment in enumerate(fragments(text, seed=3)):
            await streamed.write(fragment)
            if i % 97 == 0:
                await pilot.pause(0.05)  # let some flushes land mid-stream
        assert len(streamed.query(MarkdownChunk)) > 1  # closed blocks were sealed on the way
        await streamed.finish()
        await pilot.pause()
        assert streamed.text == text
        assert [s.text for s in lines_of(streamed)] == [s.text for s in lines_of(whole)]
        assert lines_of(streamed) == lines_of(whole)  # the styles too


async def test_long_reply_keeps_few_widgets() -> None:
    text = "\n\n".join(f"Paragraph {i} with `code` and **bold**." for i in range(400))
    message = AssistantMessage()
    app = Host(message)
    async with app.run_test(size=(90, 40)) as pilot:
        for fragment in fragments(text, seed=5):
            await message.write(fragment)
        await message.finish()
        await until(pilot, lambda: "Paragraph 399" in lines_of(message)[-1].text)
        chunks = list(message.query(MarkdownChunk))
        assert len(chunks) <= 400 // CHUNK_BLOCKS + 2
        assert sum(len(c.blocks) for c in chunks) == 400


async def test_interrupt_and_final_text() -> None:
    message = AssistantMessage()
    app = Host(message)
    async with app.run_test(size=(90, 20)) as pilot:
        await message.write("Half a ")
        await message.interrupt("(interrupted)")
        await pilot.pause()
        assert message.has_class("-interrupted")
        assert "(interrupted)" in lines_of(message)[-1].text
        await message.finish_with("Something else entirely.")
        await pilot.pause()
        assert [s.text.strip() for s in lines_of(message)] == ["Something else entirely."]


def test_blocks_and_line_offsets() -> None:
    blocks = parse("# Title\n\npara\r\ncontinued\r\n\n- a\n- b\n\n```\ncode\n```\n")
    assert [b.kind for b in blocks] == ["heading", "paragraph", "bullet_list", "fence"]
    assert blocks[1].content.plain == "para continued"
    starts = line_offsets("a\r\nb\rc\nd")
    assert starts == [0, 3, 5, 7]


def nested_list(depth: int) -> str:
    return "\n".join("  " * i + f"- level {i}" for i in range(depth))


async def test_a_list_nested_ten_deep_and_what_follows_it_are_shown() -> None:
    text = f"Before.\n\n{nested_list(12)}\n\nAfter the list: still here."
    whole, streamed = AssistantMessage(text), AssistantMessage()
    app = Host(whole, streamed)
    async with app.run_test(size=(60, 60)) as pilot:
        for fragment in fragments(text, seed=7):
            await streamed.write(fragment)
        await streamed.finish()
        await pilot.pause()
        for message in (whole, streamed):
            shown = "\n".join(s.text for s in lines_of(message))
            assert all(f"level {i}" in shown for i in range(12)), shown
            assert "After the list: still here." in shown


def test_what_the_parser_gives_up_on_is_plain_text_not_dropped() -> None:
    blocks = parse(f"{nested_list(80)}\n\nThe end.")
    shown = " ".join(b.content.plain for b in blocks)
    assert "level 79" in shown and "The end." in shown
    html = parse("use the <div> tag, <b>bold</b> or <br/>")[0].content.plain
    assert html == "use the <div> tag, <b>bold</b> or <br/>"
