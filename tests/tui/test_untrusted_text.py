"""Issue 9 item 7 and issue 10 "no MarkupError ever": text from a model, a tool, a file or a
provider never becomes markup or raw terminal bytes, on any surface of the TUI.

Each surface gets every hostile family: markup-looking brackets, CSI (`ESC [ 2 J`), OSC 52
(clipboard), OSC 0 (title), C1 (`U+009B`), raw CR and BS tricks. What the screen holds after
rendering is checked cell by cell: no control character survives, the visible forms (`␛`) do."""

from __future__ import annotations

import re
from pathlib import Path

from peri_cli.base.messages import ToolUsePart
from peri_cli.base.provider import ProviderError
from peri_cli.providers.scripted import ScriptedCall, ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.session_picker import SessionPicker
from peri_cli.tui.widgets.fold import Fold
from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

from .harness import (
    FIXED_NOW,
    assistant,
    make_runtime,
    results,
    screen_text,
    send,
    until,
    user,
    write_session,
)

# One of each family; the markers after them let the checks find them on screen.
HOSTILE = {
    "csi": "\x1b[2JWIPED",
    "osc52": "\x1b]52;c;UFdORUQ=\x07CLIP",
    "osc0": "\x1b]0;PWNED-TITLE\x07TITLE",
    "c1": "\x9b31mCSI1",
    "cr": "safe\rEVIL-CR",
    "bs": "abc\x08\x08\x08EVIL-BS",
}
BRACKETS = "grep -c '[' f; tr '[a-z' x; [b]bold[/b] [/] [@click=app.quit]q[/]"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_safe(app: PeriApp, *markers: str) -> str:
    text = screen_text(app)
    assert not CONTROL.search(text), repr(CONTROL.findall(text))
    for marker in markers:
        assert marker in text, f"{marker!r} is not on screen:\n{text}"
    return text


EVERY = " ".join(HOSTILE.values())
VISIBLE = ["␛[2JWIPED", "␛]52;c;UFdORUQ=␇CLIP", "␛]0;PWNED-TITLE␇TITLE", "<U+009B>31mCSI1"]


def hostile() -> str:
    """Every family in one string, each with its marker (so each is checked on its own)."""
    return f"{BRACKETS} {EVERY}"


async def _expand_all(pilot: object, app: PeriApp) -> None:
    for fold in app.query(Fold):
        fold.collapsed = False
    await pilot.pause()  # type: ignore[attr-defined]


async def test_model_text_and_reasoning_are_shown_visibly(tmp_path: Path) -> None:
    text = hostile()
    reply = ScriptedReply(text=f"Here: {text}\n\n- item {text}", thinking=f"hmm {text}")
    runtime = make_runtime(tmp_path, [reply])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 50)) as pilot:
        await send(pilot, f"user says {text}")
        await _expand_all(pilot, app)
        assert_safe(app, "[@click=app.quit]q[/]", "tr '[a-z' x", "hmm grep", *VISIBLE)
        assert app.is_running
    runtime.close()


async def test_tool_output_name_and_read_contents_are_shown_visibly(tmp_path: Path) -> None:
    text = hostile()
    runtime = make_runtime(tmp_path, mode="bypass")
    (runtime.workspace / "evil.txt").write_text(f"line one\n{text}\n")
    calls = [
        ScriptedCall("Read", {"file_path": "evil.txt"}),
        ScriptedCall("Bash", {"command": "cat evil.txt; echo more; echo lines"}),
        ScriptedCall(f"Nope{HOSTILE['osc0']}", {"x": text}),
    ]
    runtime._provider.replies = [ScriptedReply(tool_calls=calls), ScriptedReply(text="done")]  # type: ignore[union-attr]
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(140, 80)) as pilot:
        await send(pilot, "go")
        await _expand_all(pilot, app)
        assert_safe(app, "Unknown tool", "tr '[a-z' x", "Nope␛]0;PWNED-TITLE␇TITLE", *VISIBLE)
    runtime.close()


async def test_write_and_bash_approvals_are_shown_visibly(tmp_path: Path) -> None:
    text = hostile()
    calls = [ScriptedCall("Write", {"file_path": "f.txt", "content": f"a\n{text}\nb\n"})]
    bash = [ScriptedCall("Bash", {"command": f"echo hi\n{text}"})]
    runtime = make_runtime(
        tmp_path, [ScriptedReply(tool_calls=calls), ScriptedReply(tool_calls=bash)]
    )
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 50)) as pilot:
        await send(pilot, "write", wait=False)
        await until(pilot, lambda: app.query(PermissionPrompt), what="the Write approval")
        await pilot.pause()
        assert_safe(app, "Allow Write?", "tr '[a-z' x", *VISIBLE)
        await pilot.press("n")
        pending = app.approvals
        await until(pilot, lambda: getattr(pending.pending, "tool", "") == "Bash", what="Bash")
        await pilot.pause()
        assert_safe(app, "Allow Bash?", "tr '[a-z' x", *VISIBLE)
        await pilot.press("n")
        await until(pilot, lambda: not app.busy)
    runtime.close()


async def test_provider_errors_and_notices_are_shown_visibly(tmp_path: Path) -> None:
    text = hostile()
    runtime = make_runtime(tmp_path, [ScriptedReply(error=ProviderError(f"bad: {text}"))])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "hi")
        await until(pilot, lambda: "bad:" in screen_text(app), what="the error")
        assert_safe(app, "tr '[a-z' x", *VISIBLE)
    runtime.close()


async def test_resumed_history_titles_and_guides_are_shown_visibly(tmp_path: Path) -> None:
    text = hostile()
    runtime = make_runtime(tmp_path, new_session=False)
    bash = ToolUsePart(id="t1", name="Bash", input={"command": f"echo {text}"})
    write_session(
        runtime.store,
        "0198a1b2-0000-7000-8000-000000000001",
        [user(f"title {text}"), assistant(f"said {text}", bash), results(("t1", text))],
        guide_files=[f"AGENTS{HOSTILE['osc52']}.md"],
    )
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        await pilot.pause()
        assert_safe(app, "title grep")
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and app.runtime.session is not None)
        await _expand_all(pilot, app)
        assert_safe(app, "Project guide: AGENTS␛]52;c;UFdORUQ=␇CLIP.md", "said grep", *VISIBLE)
    runtime.close()


async def test_markup_in_commands_status_and_separators_is_text(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, [ScriptedReply(text="first"), ScriptedReply(text="x")])
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "hello")
        await send(pilot, f"/mode [b]{HOSTILE['csi']}")
        await send(pilot, f"/compact {BRACKETS}")
        assert_safe(app, "Unknown mode")
    runtime.close()
