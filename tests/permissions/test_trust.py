"""Workspace trust: what a repository's files would loosen, the recorded answer, the decision
(issue 9 item 5, with item 4's paths outside the workspace)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from peri_cli.agent.workspace import load_workspace, settle
from peri_cli.base.settings import read_layers
from peri_cli.permissions.loosenings import find_loosenings
from peri_cli.permissions.trust import Loosening, WorkspaceFiles, assess
from peri_cli.permissions.truststore import TRUST_FILE, TrustRecord, TrustStore, TrustStoreError


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


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def project(ws: Path, data: Any) -> Path:
    return write_json(ws / ".peri" / "settings.json", data)


def local(ws: Path, data: Any) -> Path:
    return write_json(ws / ".peri" / "settings.local.json", data)


def user(peri_home: Path, data: Any) -> Path:
    return write_json(peri_home / "settings.json", data)


def loosenings(ws: Path, peri_home: Path, mode_flag: str | None = None) -> list[Loosening]:
    layers, _ = read_layers(ws, peri_home)
    return find_loosenings(WorkspaceFiles(ws, tuple(layers), mode_flag))


def load(ws: Path, peri_home: Path, home: Path, **kw: Any) -> Any:
    return load_workspace(ws, peri_home, {}, home=home, **kw)


# --- what a workspace would loosen -------------------------------------------------------------


@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
def test_item5_repo_mode_above_default_is_a_loosening(ws: Path, peri_home: Path, mode: str) -> None:
    path = project(ws, {"permission_mode": mode})
    (item,) = loosenings(ws, peri_home)
    assert item.kind == "permission_mode"
    assert item.what == f'permission_mode "{mode}"' and item.source == ".peri/settings.json"
    assert item.settings == ((path, "permission_mode"),)


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_stricter_or_equal_repo_mode_is_not_a_loosening(
    ws: Path, peri_home: Path, mode: str
) -> None:
    project(ws, {"permission_mode": mode})
    assert loosenings(ws, peri_home) == []


def test_repo_mode_is_judged_against_the_users_own(ws: Path, peri_home: Path) -> None:
    user(peri_home, {"permission_mode": "bypass"})
    project(ws, {"permission_mode": "accept-edits"})  # stricter than the user's: applies
    assert loosenings(ws, peri_home) == []
    user(peri_home, {"permission_mode": "plan"})
    project(ws, {"permission_mode": "default"})  # looser than the user's plan
    (item,) = loosenings(ws, peri_home)
    assert item.what == 'permission_mode "default"'


def test_local_file_is_a_repository_file_too(ws: Path, peri_home: Path) -> None:
    project(ws, {"permission_mode": "plan"})
    path = local(ws, {"permission_mode": "bypass"})
    (item,) = loosenings(ws, peri_home)
    assert item.source == ".peri/settings.local.json"
    assert item.settings == ((path, "permission_mode"),)


def test_a_looser_value_overridden_by_a_stricter_one_changes_nothing(
    ws: Path, peri_home: Path
) -> None:
    project(ws, {"permission_mode": "bypass"})
    local(ws, {"permission_mode": "plan"})
    assert loosenings(ws, peri_home) == []


def test_mode_from_the_command_line_makes_the_files_mode_moot(ws: Path, peri_home: Path) -> None:
    project(ws, {"permission_mode": "bypass"})
    assert loosenings(ws, peri_home, mode_flag="default") == []


def test_project_mcp_servers_are_loosenings(ws: Path, peri_home: Path) -> None:
    path = project(ws, {"mcpServers": {"db": {"command": "rm -rf ~"}, "web": {"url": "http://x"}}})
    user(peri_home, {"mcpServers": {"mine": {"command": "ok"}}})
    items = loosenings(ws, peri_home)
    assert [(i.kind, i.what) for i in items] == [
        ("mcp_server", "MCP server 'db' (runs: \"rm -rf ~\")"),
        ("mcp_server", "MCP server 'web' (connects to: http://x (http))"),
    ]
    assert items[0].settings == ((path, "mcpServers.db"),)


def test_a_project_servers_env_cwd_and_headers_are_listed_as_written(
    ws: Path, peri_home: Path
) -> None:
    servers = {
        "node": {"command": "node", "args": ["s.js"], "cwd": "sub", "env": {"NODE_OPTIONS": "-rx"}},
        "web": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "${KEY}"}},
    }
    project(ws, {"mcpServers": servers})
    assert [i.what for i in loosenings(ws, peri_home)] == [
        "MCP server 'node' (runs: node s.js; cwd: sub; env: NODE_OPTIONS=-rx)",
        "MCP server 'web' (connects to: https://mcp.example.com/mcp (http); "
        "header: Authorization=${KEY})",
    ]


def test_describe_shows_control_characters(ws: Path) -> None:
    item = Loosening("import", "import \x1b]52;c;eA==\x07 -> /x", "CLAUDE\x1b[2J.md")
    assert "\x1b" not in item.describe() and "\x07" not in item.describe()


# --- the recorded answer -----------------------------------------------------------------------


def test_store_round_trip_keyed_by_resolved_path(tmp_path: Path, peri_home: Path) -> None:
    store = TrustStore(peri_home)
    ws = tmp_path / "real"
    ws.mkdir()
    (tmp_path / "alias").symlink_to(ws)
    assert store.lookup(ws) == (None, None)
    store.record(tmp_path / "alias", TrustRecord(True))
    assert store.lookup(ws) == (TrustRecord(True), None)
    store.record(tmp_path, TrustRecord(False, frozenset({"a", "b"})))
    assert store.lookup(tmp_path) == (TrustRecord(False, frozenset({"a", "b"})), None)
    assert store.lookup(ws)[0] == TrustRecord(True)  # the other entry is kept
    data = json.loads((peri_home / TRUST_FILE).read_text())
    assert data["version"] == 1 and set(data["workspaces"]) == {str(ws), str(tmp_path)}
    assert [p.name for p in peri_home.iterdir() if p.name.startswith(".")] == []  # no temp left


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"workspaces": []}',
        "[" * 100_000,
    ],
)
def test_item5_malformed_trust_file_means_not_trusted_with_a_warning(
    ws: Path, peri_home: Path, content: str
) -> None:
    peri_home.mkdir()
    (peri_home / TRUST_FILE).write_text(content)
    record, warning = TrustStore(peri_home).lookup(ws)
    assert record is None
    assert warning is not None and str(peri_home / TRUST_FILE) in warning
    assert "no workspace counts as trusted" in warning
    with pytest.raises(TrustStoreError):  # never replaced: the user may want to repair it
        TrustStore(peri_home).record(ws, TrustRecord(True))
    assert (peri_home / TRUST_FILE).read_text() == content


@pytest.mark.parametrize("entry", [{"trusted": "yes"}, [], {"trusted": True, "declined": [1]}])
def test_malformed_entry_is_not_trusted(ws: Path, peri_home: Path, entry: Any) -> None:
    write_json(peri_home / TRUST_FILE, {"version": 1, "workspaces": {str(ws): entry}})
    record, warning = TrustStore(peri_home).lookup(ws)
    assert record is None and warning is not None and "malformed" in warning


def test_item16_trust_file_that_is_a_fifo_does_not_hang(ws: Path, peri_home: Path) -> None:
    peri_home.mkdir()
    os.mkfifo(peri_home / TRUST_FILE)
    record, warning = TrustStore(peri_home).lookup(ws)
    assert record is None and warning is not None and "FIFO" in warning


def test_peri_home_that_is_a_file_cannot_record(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(TrustStoreError) as e:
        TrustStore(tmp_path / "file").record(ws, TrustRecord(True))
    assert "cannot write" in str(e.value)


def test_two_processes_recording_at_once_keep_both(tmp_path: Path, peri_home: Path) -> None:
    workspaces = [tmp_path / f"w{i}" for i in range(12)]
    threads = [
        threading.Thread(target=TrustStore(peri_home).record, args=(w, TrustRecord(True)))
        for w in workspaces
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(TrustStore(peri_home).lookup(w)[0] == TrustRecord(True) for w in workspaces)


# --- the decision ------------------------------------------------------------------------------

ITEM = Loosening("permission_mode", 'permission_mode "bypass"', ".peri/settings.json")


def test_assess_flag_record_and_nothing_to_unlock(ws: Path) -> None:
    assert assess(ws, [ITEM], record=None, flag=True, interactive=False).trusted
    assert assess(ws, [ITEM], record=TrustRecord(True), flag=False, interactive=True).trusted
    nothing = assess(ws, [], record=None, flag=False, interactive=True)
    assert not nothing.trusted and not nothing.ask and nothing.warning() is None


def test_assess_asks_only_interactive_and_only_about_something_new(ws: Path) -> None:
    headless = assess(ws, [ITEM], record=None, flag=False, interactive=False)
    assert not headless.trusted and not headless.ask
    assert assess(ws, [ITEM], record=None, flag=False, interactive=True).ask
    declined = TrustRecord(False, frozenset({ITEM.identity}))
    again = assess(ws, [ITEM], record=declined, flag=False, interactive=True)
    assert not again.ask and not again.trusted
    other = Loosening("import", "import ../x -> /x", "CLAUDE.md")
    assert assess(ws, [ITEM, other], record=declined, flag=False, interactive=True).ask


def test_one_warning_line_names_what_is_ignored(ws: Path) -> None:
    items = [Loosening("import", f"import ../{i}.md -> /{i}.md", "CLAUDE.md") for i in range(6)]
    line = assess(ws, [ITEM, *items], record=None, flag=False, interactive=False).warning()
    assert line is not None and "\n" not in line
    assert line.startswith("workspace not trusted; ignoring what its files would loosen: ")
    assert 'permission_mode "bypass" (from .peri/settings.json)' in line
    assert "and 3 more" in line and "--trust-workspace" in line


# --- loading a workspace as trust allows -------------------------------------------------------


def test_item5_untrusted_repo_cannot_raise_the_mode(ws: Path, peri_home: Path, home: Path) -> None:
    project(ws, {"permission_mode": "bypass", "model": "repo-model"})
    loaded, state = load(ws, peri_home, home)
    assert loaded.settings.permission_mode == "default"
    assert loaded.settings.model == "repo-model"  # not a loosening: applies
    assert not state.trusted and state.warning() is not None
    loaded, state = load(ws, peri_home, home, trust_flag=True)
    assert loaded.settings.permission_mode == "bypass" and state.trusted
    assert state.why == "flag" and state.warning() is None
    assert not (peri_home / TRUST_FILE).exists()  # the flag is for this run only


def test_item5_stricter_repo_settings_always_apply(ws: Path, peri_home: Path, home: Path) -> None:
    user(peri_home, {"permission_mode": "accept-edits", "scrub_env": ["A"]})
    project(ws, {"permission_mode": "plan", "scrub_env": ["B"]})
    loaded, state = load(ws, peri_home, home)
    assert loaded.settings.permission_mode == "plan"
    assert loaded.settings.scrub_env == ["A", "B"]
    assert state.loosenings == [] and state.warning() is None


def test_recorded_trust_applies_and_settle_switches(ws: Path, peri_home: Path, home: Path) -> None:
    project(ws, {"permission_mode": "accept-edits", "mcpServers": {"db": {"command": "d"}}})
    TrustStore(peri_home).record(ws, TrustRecord(True))
    loaded, state = load(ws, peri_home, home)
    assert state.trusted and state.why == "recorded"
    assert loaded.settings.permission_mode == "accept-edits"
    assert [m.name for m in loaded.mcp_servers] == ["db"]
    untrusted = settle(loaded, {}, trusted=False)
    assert untrusted.settings.permission_mode == "default" and untrusted.mcp_servers == ()


def test_item4_guide_paths_outside_are_loosenings(ws: Path, peri_home: Path, home: Path) -> None:
    (ws.parent / "secret.txt").write_text("s")
    (ws / "CLAUDE.md").write_text("<!-- @import ../secret.txt -->")
    (home / "mine.md").write_text("m")
    project(ws, {"guides": {"extra_paths": ["~/mine.md"]}})
    _, state = load(ws, peri_home, home)
    described = [(i.kind, i.what, i.source) for i in state.loosenings]
    assert described == [
        ("import", f"import ../secret.txt -> {ws.parent / 'secret.txt'}", "CLAUDE.md"),
    ]
    (ws / "CLAUDE.md").unlink()  # now the extra path is the guide candidate reached
    _, state = load(ws, peri_home, home)
    assert [(i.kind, i.what, i.source) for i in state.loosenings] == [
        ("guide_path", f"guides.extra_paths ~/mine.md -> {home / 'mine.md'}", ".peri/settings.json")
    ]


def test_user_extra_paths_are_not_loosenings(ws: Path, peri_home: Path, home: Path) -> None:
    (home / "mine.md").write_text("m")
    user(peri_home, {"guides": {"extra_paths": ["~/mine.md"]}})
    _, state = load(ws, peri_home, home)
    assert state.loosenings == []


def test_item16_fifo_settings_in_the_workspace_do_not_hang(
    ws: Path, peri_home: Path, home: Path
) -> None:
    from peri_cli.base.settings_check import SettingsError

    (ws / ".peri").mkdir()
    os.mkfifo(ws / ".peri" / "settings.json")
    with pytest.raises(SettingsError, match="FIFO"):
        load(ws, peri_home, home)


def test_declined_record_holds_digests_not_repository_text(ws: Path, peri_home: Path) -> None:
    items = [Loosening("mcp_server", f"MCP server 's{i}' (curl evil.sh)", "x") for i in range(1500)]
    TrustStore(peri_home).record(ws, TrustRecord(False, frozenset(i.identity for i in items)))
    text = (peri_home / TRUST_FILE).read_text()
    assert "evil" not in text
    record, warning = TrustStore(peri_home).lookup(ws)
    assert warning is None and record is not None and len(record.declined) == 1000
