"""Issues 11 and 14 in the TUI: /permissions, /hooks, /skills, /mcp (with reconnect), skills and
MCP prompts as slash commands (and in `/` completion), SessionStart hooks at start and after
/clear, and a stopped turn's note when a session is resumed. Real runtimes (`build_runtime`),
real hook scripts, a real MCP server, the scripted provider."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.messages import TextPart
from peri_cli.cli import build_parser
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.sdk.runtime import Runtime, build_runtime
from peri_cli.session.transcript import Interruption, MessageEntry
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.trust_dialog import TrustDialog
from peri_cli.tui.widgets.notice import NoticeLine
from peri_cli.tui.widgets.user_message import UserMessage
from tests.mcp.helpers import SERVERS, http_server

from .harness import FIXED_NOW, screen_text, send, until

SIZE = (150, 50)
ESC = "\x1b"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    return path


@pytest.fixture
def web() -> Iterator[str]:
    with http_server() as url:
        yield url


def user_settings(tmp_path: Path, **settings: Any) -> None:
    home = tmp_path / "peri-home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps(settings))


def project_settings(ws: Path, **settings: Any) -> None:
    (ws / ".peri").mkdir(exist_ok=True)
    (ws / ".peri" / "settings.json").write_text(json.dumps(settings))


def skill(root: Path, name: str, front: str, body: str = "Body.\n") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{front}\n---\n{body}")
    return folder / "SKILL.md"


def hook(command: str, matcher: str = "") -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher:
        entry["matcher"] = matcher
    return [entry]


def builder(
    tmp_path: Path, *argv: str, replies: list[ScriptedReply] | None = None
) -> Callable[[], Runtime]:
    env = {"HOME": str(tmp_path), "PERI_HOME": str(tmp_path / "peri-home")}

    def build() -> Runtime:
        runtime = build_runtime(build_parser().parse_args(list(argv)), env, interactive=True)
        runtime._provider = ScriptedProvider(list(replies or []))
        return runtime

    return build


async def ready(pilot: Any) -> None:
    app = pilot.app
    await until(pilot, lambda: app.ready and not app.busy, what="the session")


def shown(app: PeriApp) -> str:
    return screen_text(app)


def rows(app: PeriApp) -> list[str]:
    """The screen's lines without the conversation's left bars, blank ones dropped."""
    out = [line.strip().lstrip("█").strip() for line in shown(app).splitlines()]
    return [line for line in out if line]


def row(app: PeriApp, start: str) -> str:
    found = [line for line in rows(app) if line.startswith(start)]
    assert len(found) == 1, (start, rows(app))
    return found[0]


def requests(app: PeriApp) -> list[Any]:
    provider = app.runtime.agent.provider._runtime.provider()  # type: ignore[union-attr]
    assert isinstance(provider, ScriptedProvider)
    return provider.requests


def user_texts(request: Any) -> str:
    return "\n".join(
        p.text
        for m in request.messages
        if m.role == "user"
        for p in m.content
        if isinstance(p, TextPart)
    )


# --- /permissions ----------------------------------------------------------------------------


async def test_permissions_lists_rules_with_their_sources_and_the_withheld(
    ws: Path, tmp_path: Path
) -> None:
    user_settings(
        tmp_path, permissions={"allow": ["Bash(git diff:*)"], "deny": ["Read(./secrets/**)"]}
    )
    project_settings(
        ws,
        permissions={
            "allow": ["Bash(npm test)"],
            "ask": ["WebFetch"],
            "deny": ["Read(./[b]x[/b]/**)"],
        },
    )
    app = PeriApp(builder(tmp_path, "--allowedTools", "Edit(src/**)"), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        await pilot.press("n")  # don't trust: the project's allow rules are withheld
        await ready(pilot)
        await send(pilot, "/permissions")
        table = rows(app)[rows(app).index(row(app, "Rule ")) :]
        assert [line.split()[:3] for line in table[1:7]] == [
            ["Read(./secrets/**)", "deny", "~/peri-home/settings.json"],
            ["Read(./[b]x[/b]/**)", "deny", ".peri/settings.json"],  # as written, not markup
            ["WebFetch", "ask", ".peri/settings.json"],
            ["Bash(git", "diff:*)", "allow"],
            ["Bash(npm", "test)", "allow"],
            ["Edit(src/**)", "allow", "--allowedTools"],
        ]
        assert row(app, "Bash(npm test)").endswith("withheld: workspace not trusted")
        assert row(app, "Bash(git diff:*)").endswith("~/peri-home/settings.json")
        assert "Permission mode: default" in shown(app)
    app.runtime.close()


# --- /hooks ----------------------------------------------------------------------------------


async def test_hooks_lists_each_hook_and_whether_it_runs(ws: Path, tmp_path: Path) -> None:
    user_settings(tmp_path, hooks={"PreToolUse": hook(f"echo '[b]{ESC}[2Jhi'", "Bash|Edit")})
    project_settings(ws, hooks={"SessionStart": hook("echo from the repo")})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        await pilot.press("n")
        await ready(pilot)
        await send(pilot, "/hooks")
        assert row(app, "Event ").split() == ["Event", "Matcher", "Command", "From", "Runs"]
        pre = row(app, "PreToolUse")
        assert "Bash|Edit" in pre and "echo '[b]␛[2Jhi'" in pre and pre.endswith("yes")
        assert "~/peri-home/settings.json" in pre
        start = row(app, "SessionStart")
        assert "echo from the repo" in start and start.endswith("no: workspace not trusted")
        assert ".peri/settings.json" in start
    app.runtime.close()


async def test_hooks_shows_a_hooks_if_condition_and_that_it_runs_async(
    ws: Path, tmp_path: Path
) -> None:
    fields = {"if": "Bash(git commit:*)", "asyncRewake": True}
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": "review.sh", **fields}]}
    user_settings(tmp_path, hooks={"PostToolUse": [entry]})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/hooks")
        post = row(app, "PostToolUse")
        assert "Bash if Bash(git commit:*)" in post
        assert "review.sh (async, wakes the agent)" in post
    app.runtime.close()


# --- /skills and /<skill> ---------------------------------------------------------------------


async def test_skills_lists_active_shadowed_and_broken(ws: Path, tmp_path: Path) -> None:
    skill(tmp_path / ".claude" / "skills", "alpha", "name: alpha\ndescription: First alpha")
    skill(tmp_path / "peri-home" / "skills", "alpha", "name: alpha\ndescription: Second alpha")
    skill(tmp_path / ".agents" / "skills", "broken", "name: broken")  # no description
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/skills")
        assert row(app, "Skill ").split() == ["Skill", "Status", "From", "Description"]
        active = row(app, "alpha      active")
        assert "~/.claude/skills · personal" in active and active.endswith("First alpha")
        shadowed = row(app, "alpha      shadowed by ~/.claude/skills")
        assert "$PERI_HOME/skills" in shadowed and shadowed.endswith("Second alpha")
        assert "~/.agents/skills" in row(app, "broken     broken")
        assert "the required field 'description' is missing" in rows(app)
    app.runtime.close()


async def test_a_skill_runs_as_a_slash_command_and_builtins_win(ws: Path, tmp_path: Path) -> None:
    skills = tmp_path / ".claude" / "skills"
    skill(skills, "review", "name: review\ndescription: Review code", "Review $ARGUMENTS now.\n")
    skill(skills, "help", "name: help\ndescription: A skill that clashes", "SKILL HELP BODY\n")
    gone = skill(skills, "gone", "name: gone\ndescription: Deleted after start", "x\n")
    replies = [ScriptedReply(text="Reviewed.")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/review src/app.py")
        assert [m.text for m in app.query(UserMessage)] == ["/review src/app.py"]
        (request,) = requests(app)
        assert "Review src/app.py now." in user_texts(request)
        await send(pilot, "/help")  # the built-in command, not the skill
        assert "List commands and keys" in shown(app)
        assert len(requests(app)) == 1
        gone.unlink()
        await send(pilot, "/gone ")  # (the space: Enter sends, not completes)
        errors = [n.text for n in app.query(NoticeLine) if n.level == "error"]
        assert any("skill gone cannot be loaded" in e for e in errors), errors
        assert len(requests(app)) == 1  # nothing was sent
    app.runtime.close()


async def test_a_skills_allowed_tools_are_pre_approved_for_its_turn(
    ws: Path, tmp_path: Path
) -> None:
    skills = tmp_path / ".claude" / "skills"
    front = "name: stamp\ndescription: Stamp a file\nallowed-tools: Bash(touch:*)"
    skill(skills, "stamp", front, "Touch the stamp.\n")
    touch = ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "touch stamped"})])
    replies = [touch, ScriptedReply(text="Stamped."), touch]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/stamp ")  # (the space: Enter sends, not completes)
        assert (ws / "stamped").exists() and app.approvals.pending is None
        (ws / "stamped").unlink()
        await send(pilot, "stamp again", wait=False)  # another turn: asked again
        await until(pilot, lambda: app.approvals.pending is not None, what="the approval")
        await pilot.press("n")
        await until(pilot, lambda: not app.busy)
        assert not (ws / "stamped").exists()
    app.runtime.close()


async def test_skills_and_mcp_prompts_are_completed_after_a_slash(
    ws: Path, tmp_path: Path, web: str
) -> None:
    skill(tmp_path / ".claude" / "skills", "release", "name: release\ndescription: Cut it")
    user_settings(tmp_path, mcpServers={"web": {"type": "http", "url": web}})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(pilot, app.runtime.mcp_prompt_commands, what="the server's prompts")
        await pilot.press("/", "r", "e")
        await until(pilot, lambda: app.prompt_area.menu.is_open, what="the menu")
        screen = shown(app)
        assert "/resume" in screen and "/release" in screen and "(skill) Cut it" in screen
        await pilot.press("ctrl+c", "ctrl+c")  # closes the menu, clears the prompt
        app.prompt_area.input.insert("/mcp__w")
        await until(pilot, lambda: "/mcp__web__review" in shown(app), what="the prompt's command")
        assert "<path> [focus]" in shown(app) and "(MCP prompt) Ask for a review" in shown(app)
    app.runtime.close()


# --- /mcp and MCP prompts ---------------------------------------------------------------------


async def test_mcp_shows_the_servers_and_reconnects_one(ws: Path, tmp_path: Path, web: str) -> None:
    crash = {"command": sys.executable, "args": [str(SERVERS / "crash_server.py")]}
    user_settings(tmp_path, mcpServers={"web": {"type": "http", "url": web}, "crash": crash})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        runtime = app.runtime

        def connected() -> bool:
            return sum("connected" in line for line in runtime.mcp_statuses()) == 2

        await until(pilot, connected, what="both servers")
        await send(pilot, "/mcp ")  # (the space: Enter sends, not completes)
        screen = shown(app)
        assert "web (user, http): connected — 5 tools, 1 prompt" in screen
        assert "crash (user, stdio): connected — 3 tools" in screen
        assert "/mcp__web__review <path> [focus]" in screen
        await send(pilot, "/mcp reconnect crash")
        assert "Reconnecting MCP server 'crash'" in shown(app)
        await until(pilot, connected, what="crash to connect again")
        await send(pilot, "/mcp reconnect nope")
        assert "No MCP server named 'nope'; configured: 'web', 'crash'." in shown(app)
        await send(pilot, "/mcp restart")
        assert "Usage: /mcp, or /mcp reconnect NAME" in shown(app)
    app.runtime.close()


async def test_an_mcp_prompt_runs_as_a_slash_command(ws: Path, tmp_path: Path, web: str) -> None:
    user_settings(tmp_path, mcpServers={"web": {"type": "http", "url": web}})
    replies = [ScriptedReply(text="Looked.")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)  # sent at once: the command waits for the server to connect
        await send(pilot, '/mcp__web__review "src/a b.py" security')
        (request,) = requests(app)
        assert "Please review src/a b.py, looking for security." in user_texts(request)
        assert [m.text for m in app.query(UserMessage)] == [
            '/mcp__web__review "src/a b.py" security'
        ]
        await send(pilot, "/mcp__web__review ")
        await send(pilot, "/mcp__web__nope x")
        errors = [n.text for n in app.query(NoticeLine) if n.level == "error"]
        assert errors == [
            "/mcp__web__review needs path: /mcp__web__review <path> [focus]",
            "MCP server 'web' has no prompt /mcp__web__nope; /mcp lists it",
        ]
        assert len(requests(app)) == 1
        await send(pilot, "/mcp__other__thing")  # no such server: ordinary text for the model
        assert "/mcp__other__thing" in user_texts(requests(app)[-1])
    app.runtime.close()


# --- SessionStart hooks -----------------------------------------------------------------------


def session_hook(ws: Path, name: str, text: str) -> str:
    """A hook script that notes its stdin in `<name>.jsonl` and prints `text` as context."""
    path = ws / f"{name}.sh"
    path.write_text(
        f"#!/bin/sh\ncat >> {ws / name}.jsonl\necho >> {ws / name}.jsonl\necho {text}\n"
    )
    path.chmod(0o755)
    return str(path)


def payloads(ws: Path, name: str) -> list[dict[str, Any]]:
    path = ws / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_session_start_hooks_feed_the_next_prompt(ws: Path, tmp_path: Path) -> None:
    start = session_hook(tmp_path, "start", "CONTEXT-FROM-START")
    cleared = session_hook(tmp_path, "clear", "CONTEXT-AFTER-CLEAR")
    failing = tmp_path / "fail.sh"
    failing.write_text("#!/bin/sh\necho the hook broke >&2\nexit 1\n")
    failing.chmod(0o755)
    user_settings(
        tmp_path,
        hooks={
            "SessionStart": [
                *hook(start, "startup"),
                *hook(cleared, "clear"),
                *hook(str(failing), "startup"),
            ]
        },
    )
    replies = [ScriptedReply(text="one"), ScriptedReply(text="two")]
    app = PeriApp(builder(tmp_path, replies=replies), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert [p["source"] for p in payloads(tmp_path, "start")] == ["startup"]
        assert payloads(tmp_path, "start")[0]["hook_event_name"] == "SessionStart"
        warnings = [n.text for n in app.query(NoticeLine) if n.level == "warning"]
        assert any("the hook broke" in w for w in warnings), warnings
        await send(pilot, "hello")
        assert "CONTEXT-FROM-START" in user_texts(requests(app)[0])
        await send(pilot, "/clear")
        await until(pilot, lambda: payloads(tmp_path, "clear"), what="the clear hook")
        assert [p["source"] for p in payloads(tmp_path, "clear")] == ["clear"]
        await send(pilot, "again")
        assert "CONTEXT-AFTER-CLEAR" in user_texts(requests(app)[1])
        assert "CONTEXT-FROM-START" not in user_texts(requests(app)[1])  # (cleared)
    app.runtime.close()


# --- resuming a session that holds a stopped turn ---------------------------------------------


async def test_a_stopped_turn_shows_one_line_when_resumed(ws: Path, tmp_path: Path) -> None:
    first = builder(tmp_path)()
    assert first.session is not None
    session_id = first.session.id
    from peri_cli.base.messages import user_text

    first.session.append(MessageEntry(message=user_text("run the long job")))
    note = "[The previous turn was interrupted by the user: Bash sleep 30 was stopped.]"
    first.session.append(Interruption(reason="cancelled", text=note))
    first.close()
    app = PeriApp(builder(tmp_path, "-r", session_id), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        notes = [n for n in app.query(NoticeLine) if n.text == "Interrupted"]
        assert len(notes) == 1 and notes[0].level == "info"
        assert "Bash sleep 30" not in shown(app)  # the note is the model's
    app.runtime.close()


async def test_a_rewind_does_not_run_session_start_hooks_again(ws: Path, tmp_path: Path) -> None:
    start = session_hook(tmp_path, "start", "CONTEXT-FROM-START")
    user_settings(tmp_path, hooks={"SessionStart": hook(start)})
    app = PeriApp(builder(tmp_path, replies=[ScriptedReply(text="one")]), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        await send(pilot, "/rewind", wait=False)
        await pilot.press("enter", "enter")
        await until(pilot, lambda: app.prompt_area.text == "hello", what="the rewind")
        await ready(pilot)
        assert len(payloads(tmp_path, "start")) == 1
    app.runtime.close()
