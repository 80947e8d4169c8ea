"""The TUI asks once whether to trust a workspace whose files would loosen something, before the
session is attached (issue 9 items 4 and 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from peri_cli.cli import build_parser
from peri_cli.permissions.trust import Loosening
from peri_cli.permissions.truststore import TRUST_FILE, TrustStore
from peri_cli.providers.scripted import ScriptedCall, ScriptedProvider, ScriptedReply
from peri_cli.sdk.runtime import Runtime, build_runtime
from peri_cli.session.transcript_file import load
from peri_cli.tui.app import PeriApp
from peri_cli.tui.screens.trust_dialog import TrustDialog, dialog_text
from peri_cli.tui.widgets.permission_prompt import PermissionPrompt

from .harness import FIXED_NOW, screen_text, until
from .test_turns import notices


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    monkeypatch.chdir(path)  # `peri` runs in the workspace
    return path


def repo(ws: Path, **settings: Any) -> None:
    (ws / ".peri").mkdir(exist_ok=True)
    (ws / ".peri" / "settings.json").write_text(json.dumps(settings))


def builder(
    tmp_path: Path, *argv: str, replies: list[ScriptedReply] | None = None
) -> Callable[[], Runtime]:
    env = {"HOME": str(tmp_path), "PERI_HOME": str(tmp_path / "peri-home")}

    def build() -> Runtime:
        runtime = build_runtime(build_parser().parse_args(list(argv)), env, interactive=True)
        runtime._provider = ScriptedProvider(list(replies or []))
        return runtime

    return build


def bash_then_done() -> list[ScriptedReply]:
    return [
        ScriptedReply(tool_calls=[ScriptedCall("Bash", {"command": "touch ran"})]),
        ScriptedReply(text="done"),
    ]


SIZE = (110, 36)


async def ready(pilot: Any, keys: list[str] | None = None) -> None:
    """Answer the trust dialog with `keys` (None: no dialog may appear), then let the session
    attach."""
    app = pilot.app
    if keys is not None:
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        assert app.runtime.session is None or app.runtime.trust_pending
        await pilot.press(*keys)
    await until(pilot, lambda: app.ready and not app.busy, what="the session")
    assert not isinstance(app.screen, TrustDialog)


def trust_file(tmp_path: Path) -> Path:
    return tmp_path / "peri-home" / TRUST_FILE


async def test_item5_trust_applies_the_mode_and_is_remembered(ws: Path, tmp_path: Path) -> None:
    repo(ws, permission_mode="bypass")
    app = PeriApp(builder(tmp_path, replies=bash_then_done()), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ["1"])
        assert app.runtime.mode == "bypass" and app.agent.policy.mode == "bypass"
        assert app.status.status.mode == "bypass"
        app.prompt_area.input.insert("go")
        await pilot.press("enter")
        await until(pilot, (ws / "ran").exists, what="Bash to run without asking")
        assert not app.query(PermissionPrompt)
    app.slot.release()
    record, _ = TrustStore(tmp_path / "peri-home").lookup(ws)
    assert record is not None and record.trusted

    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)  # the next run does not ask
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.runtime.mode == "bypass" and "not trusted" not in notices(app)
    app.slot.release()


async def test_item5_dont_trust_ignores_the_loosening_with_one_warning(
    ws: Path, tmp_path: Path
) -> None:
    repo(ws, permission_mode="bypass")
    app = PeriApp(builder(tmp_path, replies=bash_then_done()), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ["enter"])  # Enter alone: the dialog opens on "Don't trust"
        assert app.runtime.mode == "default" and app.agent.policy.mode == "default"
        assert notices(app).count("workspace not trusted") == 1
        app.prompt_area.input.insert("go")
        await pilot.press("enter")
        await until(pilot, lambda: app.query(PermissionPrompt), what="Bash to ask")
    app.slot.release()
    assert not (ws / "ran").exists()

    # the answer is remembered: not asked again, still ignored, still said once
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.runtime.mode == "default"
        assert notices(app).count("workspace not trusted") == 1
    app.slot.release()

    # something new to unlock is asked about
    repo(ws, permission_mode="bypass", mcpServers={"db": {"command": "db-server"}})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ["n"])
    app.slot.release()


async def test_typing_while_peri_starts_does_not_trust(ws: Path, tmp_path: Path) -> None:
    """The prompt takes keys while Peri starts ("starting"; a message sent then is queued), and
    the dialog opens when the runtime is built: an Enter meant for the prompt must not trust."""
    repo(ws, permission_mode="bypass")
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h", "i")
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        await pilot.pause()
        assert "› 2. Don't trust" in screen_text(app)
        await pilot.press("enter")
        await ready(pilot)
        assert app.runtime.mode == "default"
    app.slot.release()
    record, _ = TrustStore(tmp_path / "peri-home").lookup(ws)
    assert record is not None and not record.trusted


async def test_escape_decides_nothing_and_asks_again(ws: Path, tmp_path: Path) -> None:
    repo(ws, permission_mode="accept-edits")
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ["escape"])
        assert app.runtime.mode == "default"
    app.slot.release()
    assert not trust_file(tmp_path).exists()
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ["y"])
        assert app.runtime.mode == "accept-edits"
    app.slot.release()


async def test_nothing_to_unlock_is_not_asked(ws: Path, tmp_path: Path) -> None:
    repo(ws, permission_mode="plan", model="repo-model")
    (ws / "AGENTS.md").write_text("Project rules.")
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.runtime.mode == "plan" and app.runtime.model == "repo-model"
        assert "Project rules." in app.agent.session.snapshot.system
    app.slot.release()
    assert not trust_file(tmp_path).exists()


async def test_trust_workspace_flag_in_the_tui_is_for_this_run(ws: Path, tmp_path: Path) -> None:
    repo(ws, permission_mode="bypass")
    app = PeriApp(builder(tmp_path, "--trust-workspace"), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.runtime.mode == "bypass"
    app.slot.release()
    assert not trust_file(tmp_path).exists()


async def test_item4_answer_decides_the_frozen_guide_text(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOP-SECRET")
    (ws / "CLAUDE.md").write_text("Rules.\n<!-- @import ../secret.txt -->\n")
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.query("#trust-body"), what="the dialog")
        assert isinstance(app.screen, TrustDialog)
        shown = str(app.screen.query_one("#trust-body", Static).render())
        assert f"import ../secret.txt -> {tmp_path / 'secret.txt'}" in shown
        assert "(from CLAUDE.md)" in shown
        await ready(pilot, ["2"])
        system = app.agent.session.snapshot.system
        assert "Rules." in system and "TOP-SECRET" not in system
    app.slot.release()
    trust_file(tmp_path).unlink()
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ["1"])
        path = app.runtime.store.path_of(app.agent.session.id)
        assert "TOP-SECRET" in load(path).header.snapshot.system
    app.slot.release()


async def test_item5_resumed_session_waits_for_the_answer(ws: Path, tmp_path: Path) -> None:
    app = PeriApp(builder(tmp_path, replies=[ScriptedReply(text="hi")]), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        session_id = app.agent.session.id
        app.prompt_area.input.insert("hello")
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and not app.queue, what="the turn")
    app.slot.release()

    repo(ws, permission_mode="accept-edits")
    runtime = builder(tmp_path, "-c")()  # built before the app, as cli.py does for -c
    assert runtime.trust_pending and runtime.agent is not None
    assert runtime.agent.policy.mode == "default"
    app = PeriApp(runtime, clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, ["1"])
        assert app.agent.session.id == session_id
        assert app.agent.policy.mode == "accept-edits"
        assert app.status.status.mode == "accept-edits"
    app.slot.release()


async def test_a_long_list_scrolls_and_the_choices_stay_on_screen_at_60x20(
    ws: Path, tmp_path: Path
) -> None:
    repo(ws, mcpServers={f"s{i}": {"command": f"server-{i}"} for i in range(40)})
    app = PeriApp(builder(tmp_path), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), what="the trust dialog")
        await pilot.pause()
        screen = screen_text(app)
        assert "Trust this folder?" in screen
        assert "1. Trust this folder" in screen and "2. Don't trust" in screen
        assert "Esc decides later" in screen
        assert "PgUp/PgDn" in screen and "more below" in screen  # the list goes on
        assert "server-39" not in screen
        await pilot.press("end")
        await pilot.pause()
        assert "server-39" in screen_text(app) and "2. Don't trust" in screen_text(app)
        await pilot.press("n")
        await ready(pilot)
    app.slot.release()


def test_dialog_text_never_interprets_file_content() -> None:
    items = [
        Loosening("import", "import [bold red]x[/] -> /x\x1b]52;c;aGk=\x07", "CLAUDE.md"),
        Loosening("mcp_server", "MCP server 'db' (\x1b[2Jrm)", ".peri/settings.json"),
    ]
    text = dialog_text(Path("/w/\x1b[31mred"), items)
    assert "[bold red]x[/]" in text.plain  # shown as written, not as markup
    assert "\x1b" not in text.plain and "\x07" not in text.plain
    assert "␛" in text.plain
