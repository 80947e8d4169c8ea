"""Issue 37 item 10 in the app (Pilot): a prompt the provider refused is said to be left out, Up
brings it back to edit, the next prompt goes without it, and a resumed session shows where it
was refused."""

from __future__ import annotations

from pathlib import Path

from peri_cli.base.messages import TextPart
from peri_cli.base.provider import ProviderError
from peri_cli.providers.scripted import ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.history import PromptHistory
from peri_cli.tui.items import NoticeItem, display_items
from peri_cli.tui.widgets.notice import NoticeLine
from tests.tui.harness import FIXED_NOW, make_runtime, send, until

REFUSED = ProviderError(
    "Anthropic API error 400 invalid_request_error: image exceeds 5 MB maximum", status=400
)


def _notices(app: PeriApp) -> list[str]:
    return [n.text for n in app.query(NoticeLine)]


async def test_a_refused_prompt_is_said_left_out_and_up_brings_it_back(tmp_path: Path) -> None:
    runtime = make_runtime(
        tmp_path, [ScriptedReply(text="hello"), ScriptedReply(error=REFUSED), ScriptedReply("ok")]
    )
    app = PeriApp(runtime, clock=lambda: FIXED_NOW, history=PromptHistory(None))
    async with app.run_test(size=(110, 30)) as pilot:
        await send(pilot, "first")
        await send(pilot, "the refused one")
        await until(pilot, lambda: any("image exceeds" in n for n in _notices(app)))
        line = next(n for n in _notices(app) if "image exceeds" in n)
        assert line == (
            "Stopped: Anthropic API error 400 invalid_request_error: image exceeds 5 MB maximum. "
            "This prompt is left out of the conversation, so it is not sent again: change it, or "
            "what it attaches, and send it again. Up brings it back to edit."
        )
        await pilot.press("up")
        assert app.prompt_area.text == "the refused one"
        await pilot.press("ctrl+c")  # clear it; send something else
        await send(pilot, "another")
        request = runtime._provider.requests[-1]  # type: ignore[union-attr]
        texts = [p.text for m in request.messages for p in m.content if isinstance(p, TextPart)]
        assert texts == ["first", "hello", "another"]
        assert runtime.agent is not None
        items = display_items(runtime.agent.session.entries)  # as a resumed session draws it
    refused = [i for i in items if isinstance(i, NoticeItem) and "refused" in i.text]
    assert [i.text for i in refused] == [
        "Left out of the conversation, the provider refused it: Anthropic API error 400 "
        "invalid_request_error: image exceeds 5 MB maximum"
    ]
    runtime.close()
