"""Issue 24, "Streams off the UI thread": in the TUI the provider's streams are read on a worker
thread and reach the UI in batches. Through the real Anthropic SDK and the fake server: every
character the main agent and a SubAgent streamed is on screen, in order, up to an error that
cuts the reply (no completed message then replaces what was streamed, so a lost batch shows)."""

from __future__ import annotations

from pathlib import Path

from peri_cli.base.settings import Settings
from peri_cli.providers.procstream import ProcessProvider
from peri_cli.sdk.runtime import Runtime
from peri_cli.session.store import SessionStore
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.agent_pane import AgentPane
from peri_cli.tui.widgets.assistant_message import AssistantMessage
from tests.fakeserver import FakeServer, _pieces

from .harness import FIXED_NOW, MODEL, send, until

HEAD = 3  # message_start, ping, content_block_start: the events before the first delta


def reply(seed: str, words: int) -> str:
    lines = [" ".join(f"{seed}{i + j}" for j in range(12)) for i in range(0, words, 12)]
    return "\n\n".join(lines)


def cut(text: str, deltas: int) -> tuple[dict[str, object], str]:
    """A script item streaming `deltas` pieces of `text`, then an error no retry helps; and
    the text the user must see."""
    item = {"text": text, "error_event": "invalid_request_error", "cut_after": HEAD + deltas}
    return item, "".join(_pieces(text)[:deltas])


def tui_runtime(tmp_path: Path, url: str) -> Runtime:
    """As `peri` builds it for the TUI: the real provider, from the environment."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    runtime = Runtime(
        workspace=workspace,
        peri_home=home,
        env={"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url},
        settings=Settings(),
        store=SessionStore(home, workspace),
        provider_name="anthropic",
        model=MODEL,
        mode="bypass",
        max_turns=None,
        interactive=True,
    )
    runtime.start_new()
    return runtime


async def test_the_main_agent_and_a_subagent_show_every_streamed_character(
    tmp_path: Path,
) -> None:
    child_item, child_seen = cut(reply("child", 3000), 2500)
    main_item, main_seen = cut(reply("main", 4000), 3700)
    agent = {"name": "Agent", "input": {"prompt": "child job: write", "description": "writer"}}
    script = [
        {"when": "orchestrate", "tool_calls": [agent]},
        {"when": "child job", **child_item},
        {"when": "orchestrate", **main_item},
    ]
    with FakeServer(script=script) as server:
        runtime = tui_runtime(tmp_path, server.url)
        app = PeriApp(runtime, clock=lambda: FIXED_NOW)
        async with app.run_test(size=(120, 40)) as pilot:
            await send(pilot, "orchestrate a writer")
            assert isinstance(runtime.provider(), ProcessProvider)  # the TUI's kind
            shown = [m.text for m in app.screen.query(AssistantMessage)]
            assert shown[-1].startswith(main_seen)
            assert shown[-1][len(main_seen) :].strip() == "*(interrupted)*"
            board = app.agent_board
            assert board is not None and len(board.children) == 1
            await app.open_agent_pane(next(iter(board.children)))
            await until(pilot, lambda: isinstance(app.screen, AgentPane), what="the pane")
            await pilot.pause()
            child_text = "".join(m.text for m in app.screen.query(AssistantMessage))
            assert child_text.startswith(child_seen)
            assert "child" not in child_text[len(child_seen) :]  # nothing past the cut
        runtime.close()
