"""Custom slash commands in the TUI (issue 39): `/help` lists them (a shadowed one by the name
that reaches it), `/` completes them, and typing one runs it: its `!` line asked about as the
Bash call it is, shown exactly as it will run, its output in what the model receives."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.providers.scripted import ScriptedReply
from peri_cli.tui.app import PeriApp
from peri_cli.tui.widgets.user_message import UserMessage

from .harness import FIXED_NOW, screen_text, send, until
from .test_extension_commands import builder, ready, requests, rows, user_texts

SIZE = (150, 50)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    return path


def command(root: Path, rel: str, text: str) -> Path:
    path = root / ".claude" / "commands" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def line_of(app: PeriApp, start: str) -> str:
    found = [line for line in rows(app) if line.startswith(start)]
    assert len(found) == 1, (start, rows(app))
    return found[0]


async def test_help_lists_custom_commands_with_origin_and_shadowing(
    ws: Path, tmp_path: Path
) -> None:
    command(ws, "frontend/component.md", "---\ndescription: Make a component\n---\nMake $1\n")
    command(ws, "review.md", "---\ndescription: Project review\nargument-hint: [pr]\n---\nR\n")
    command(tmp_path, "review.md", "---\ndescription: My review\n---\nMine\n")
    command(ws, "help.md", "Not the built-in help \x1b[2J\n")
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/help")
        assert "Custom commands" in screen_text(app)
        assert line_of(app, "/component ").endswith("Make a component (project:frontend)")
        assert line_of(app, "/review [pr] ").endswith("Project review (project)")
        mine = line_of(app, "/user:review ")
        assert mine.endswith("My review (user) · shadowed by the project's /review")
        clash = line_of(app, "/project:help ")
        assert "(project) · shadowed by the built-in /help" in clash
        assert "\x1b" not in screen_text(app)  # the file's text is made visible
    app.runtime.close()


async def test_a_custom_command_is_completed_after_a_slash(ws: Path, tmp_path: Path) -> None:
    command(ws, "frontend/component.md", "---\ndescription: Make a component\n---\nMake $1\n")
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("/", "c", "o", "m")
        await until(pilot, lambda: app.prompt_area.menu.is_open, what="the menu")
        screen = screen_text(app)
        assert "/component" in screen and "(project:frontend) Make a component" in screen
        assert "/compact" in screen  # the built-in first
    app.runtime.close()


async def test_typing_a_command_runs_it_asking_for_its_bang_line(ws: Path, tmp_path: Path) -> None:
    command(tmp_path, "ctx.md", "---\ndescription: Context\n---\nFrom: !`echo $1-bang`\nTopic $1\n")
    replies = [ScriptedReply(text="Got it.")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/ctx deep", wait=False)
        await until(pilot, lambda: app.approvals.pending is not None, what="the approval")
        assert "echo deep-bang" in screen_text(app)  # the line exactly as it will run
        assert "Allow Bash?" in screen_text(app)
        await pilot.press("y")
        await until(pilot, lambda: not app.busy and requests(app), what="the turn")
        assert [m.text for m in app.query(UserMessage)] == ["/ctx deep"]
        (request,) = requests(app)
        assert user_texts(request) == "From: deep-bang\nTopic deep\n"
        assert "Got it." in screen_text(app)
    app.runtime.close()


async def test_a_denied_bang_line_still_runs_the_command(ws: Path, tmp_path: Path) -> None:
    command(tmp_path, "mark.md", "Mark: !`touch marked`\nThen $ARGUMENTS\n")
    replies = [ScriptedReply(text="Went on.")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/mark it", wait=False)
        await until(pilot, lambda: app.approvals.pending is not None, what="the approval")
        await pilot.press("n")
        await until(pilot, lambda: not app.busy and requests(app), what="the turn")
        assert not (ws / "marked").exists()
        (request,) = requests(app)
        assert user_texts(request).startswith("Mark: [not run: denied: ")
        assert user_texts(request).endswith("]\nThen it\n")
    app.runtime.close()


@pytest.mark.parametrize("trust", [True, False], ids=["trusted", "not-trusted"])
async def test_a_project_commands_grant_is_in_the_trust_question_and_holds_only_if_trusted(
    ws: Path, tmp_path: Path, trust: bool
) -> None:
    from peri_cli.tui.screens.trust_dialog import TrustDialog

    command(ws, "hi.md", "---\nallowed-tools: Bash(echo:*)\n---\nSaid: !`echo hello`\n")
    replies = [ScriptedReply(text="Heard.")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        grant = "command /hi pre-approves Bash(echo:*)"
        await until(pilot, lambda: grant in screen_text(app), what="the grant in the question")
        assert ".claude/commands/hi.md" in screen_text(app)
        await pilot.press("t" if trust else "n")
        await ready(pilot)
        await send(pilot, "/hi ", wait=False)
        if not trust:  # withheld: the line is asked about as any command is
            await until(pilot, lambda: app.approvals.pending is not None, what="the approval")
            await pilot.press("y")
        await until(pilot, lambda: not app.busy and requests(app), what="the turn")
        (request,) = requests(app)
        assert user_texts(request) == "Said: hello\n"
    app.runtime.close()
