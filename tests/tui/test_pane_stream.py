"""A SubAgent's pane while the child streams fast (issue 24, the pane's frames): text arriving
faster than a frame can draw it is drawn a budget at a time (an open code fence plain, until it
closes), and what the pane shows once the child is done is every line of its reply, drawn as a
finished reply is drawn (a resumed session's: all of it at once). Through the stream worker and
the fake server, the child's reply paced over half a second while its pane is open."""

from __future__ import annotations

from pathlib import Path

from textual.strip import Strip

from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.agent_pane import AgentPane
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from peri_cli.tui.widgets.markdown_chunk import MarkdownChunk
from peri_cli.tui.widgets.notice import NoticeLine
from tests.fakeserver import FakeServer

from .harness import FIXED_NOW, send, until
from .test_streams import tui_runtime

CODE = [f"def step_{i}(x):\n    return x * {i} + len('code line {i}')" for i in range(40)]


def child_reply() -> str:
    """Many blocks (far more than a flush draws in its budget), a long code fence among them
    and one at the very end, so the last block stays open until the stream ends."""
    prose = [f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(40)) for i in range(120)]
    fence = "```python\n" + "\n".join(CODE) + "\n```"
    tail = "```python\n" + "\n".join(CODE[:5]) + "\n```"
    return "\n\n".join([*prose[:60], fence, "- a list item\n- another one", *prose[60:], tail])


def drawn(message: AssistantMessage) -> list[list[tuple[str, object]]]:
    """The lines a reply's chunks draw, in order: each as (text, style) of its segments."""
    lines: list[Strip] = []
    for chunk in message.query(MarkdownChunk):
        lines += chunk.lines(chunk.size.width)
    return [[(seg.text, seg.style) for seg in strip] for strip in lines]


async def test_the_pane_draws_all_of_a_fast_childs_reply_as_a_finished_reply(
    tmp_path: Path,
) -> None:
    text = child_reply()
    agent = {
        "name": "Agent",
        "input": {"prompt": "child job: write", "description": "writer", "run_in_background": True},
    }
    script = [
        {"when": "orchestrate", "tool_calls": [agent]},
        {"when": "orchestrate", "text": "Started."},
        {"when": "orchestrate", "text": "Done."},
        {"when": "child job", "text": text, "pace": 0.5},
    ]
    with FakeServer(script=script) as server:
        runtime = tui_runtime(tmp_path, server.url)
        app = PeriApp(runtime, clock=lambda: FIXED_NOW)
        async with app.run_test(size=(120, 40)) as pilot:
            await send(pilot, "orchestrate a writer")
            board = app.agent_board
            assert board is not None and len(board.children) == 1
            child = next(iter(board.children.values()))
            await app.open_agent_pane(child.id)
            await until(pilot, lambda: isinstance(app.screen, AgentPane), what="the pane")
            pane = app.screen
            assert isinstance(pane, AgentPane)
            await until(pilot, lambda: not child.running, timeout=30, what="the child's end")
            ended = lambda: any("finished" in n.text for n in pane.conversation.query(NoticeLine))  # noqa: E731
            await until(pilot, ended, what="the end notice")
            await pilot.pause()
            streamed = list(pane.conversation.query(AssistantMessage))
            assert len(streamed) == 1 and streamed[0].text == text
            shown = drawn(streamed[0])
            once = AssistantMessage(text)  # the same reply, as a resumed session shows it
            await pane.conversation.add(once)
            await pilot.pause()
            expected = drawn(once)
            words = "\n".join("".join(t for t, _ in line) for line in shown)
            for line in [*CODE, "word119x39", "another one"]:
                for part in line.split("\n"):
                    assert part.strip() in words
            assert len(shown) == len(expected)
            assert shown == expected  # the fences highlighted, nothing left drawn plain
        runtime.close()
