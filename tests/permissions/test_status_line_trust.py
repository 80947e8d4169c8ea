"""A project's `statusLine` is a command a repository would run: a loosening, withheld until the
workspace is trusted; the user's own always applies (CONTRACT §12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.agent.workspace import settle
from peri_cli.base.settings import StatusLineSettings, load_settings
from tests.permissions.test_trust import load, local, loosenings, project, user, write_json


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def peri_home(tmp_path: Path) -> Path:
    return tmp_path / "peri-home"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_a_project_status_line_is_a_loosening_naming_its_command(ws: Path, peri_home: Path) -> None:
    path = project(ws, {"statusLine": {"type": "command", "command": "touch \x1b[2J/tmp/x"}})
    user(peri_home, {"statusLine": {"type": "command", "command": "mine"}})
    (item,) = loosenings(ws, peri_home)
    assert item.kind == "status_line"
    assert item.what == "status line command `touch \x1b[2J/tmp/x`"
    assert "\x1b" not in item.describe() and item.source == ".peri/settings.json"
    assert item.settings == ((path, "statusLine"),)


def test_an_empty_or_local_one_counts_the_same(ws: Path, peri_home: Path) -> None:
    project(ws, {"statusLine": {}})
    assert loosenings(ws, peri_home) == []
    local(ws, {"statusLine": {"type": "command", "command": "x"}})
    assert [i.source for i in loosenings(ws, peri_home)] == [".peri/settings.local.json"]


def test_untrusted_keeps_the_users_status_line_and_trusted_takes_the_projects(
    ws: Path, peri_home: Path, home: Path
) -> None:
    project(ws, {"statusLine": {"type": "command", "command": "repo's", "padding": 3}})
    user(peri_home, {"statusLine": {"type": "command", "command": "mine"}})
    loaded, state = load(ws, peri_home, home)
    assert not state.trusted and "status line command `repo's`" in (state.warning() or "")
    assert loaded.settings.statusLine == StatusLineSettings(command="mine")
    trusted = settle(loaded, {}, trusted=True).settings.statusLine
    assert (trusted.command, trusted.padding) == ("repo's", 3)


def test_the_setting_is_checked_like_any_other(ws: Path, peri_home: Path) -> None:
    user(peri_home, {"statusLine": {"type": "command", "command": "c", "padding": 2, "other": 1}})
    loaded = load_settings(ws, peri_home, {})
    assert loaded.settings.statusLine.padding == 2
    assert any("statusLine.other" in w for w in loaded.warnings)


def test_claude_codes_own_files_carry_it_under_the_same_rules(
    ws: Path, peri_home: Path, home: Path
) -> None:
    """The status line most Claude Code users keep in `~/.claude/settings.json` works as it is
    (a sub-key Peri does not know ignored without a word); a project's `.claude/settings.json`
    is a repository's file like `.peri/settings.json`, and its output style applies as one."""
    mine = {"type": "command", "command": "mine", "padding": 1, "refreshInterval": 5}
    write_json(home / ".claude" / "settings.json", {"statusLine": mine})
    repo = {"type": "command", "command": "repo's"}
    path = write_json(
        ws / ".claude" / "settings.json", {"statusLine": repo, "outputStyle": "Explanatory"}
    )
    loaded, state = load(ws, peri_home, home)
    assert loaded.settings.statusLine == StatusLineSettings(command="mine", padding=1)
    assert loaded.settings.outputStyle == "Explanatory"
    assert not any("refreshInterval" in w for w in loaded.warnings)
    (item,) = state.loosenings
    assert item.kind == "status_line" and item.settings == ((path, "statusLine"),)
    assert settle(loaded, {}, trusted=True).settings.statusLine.command == "repo's"
