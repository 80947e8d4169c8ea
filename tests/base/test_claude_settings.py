"""Claude Code's settings files read as layers below Peri's own (issue 39, CONTRACT §3, §12):
what is read from them, in what order, and how a bad file or key is reported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.claude_settings import (
    SWITCH_ENV,
    add_claude_layers,
    claude_model,
    model_for,
)
from peri_cli.base.settings import LoadedSettings, merge_layers, read_layers
from peri_cli.base.settings_check import SettingsError


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def peri_home(tmp_path: Path) -> Path:
    path = tmp_path / "peri-home"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def cc_user(home: Path, data: Any) -> Path:
    return write(home / ".claude" / "settings.json", data)


def cc_project(ws: Path, data: Any, name: str = "settings.json") -> Path:
    return write(ws / ".claude" / name, data)


def peri_user(peri_home: Path, data: Any) -> Path:
    return write(peri_home / "settings.json", data)


def peri_project(ws: Path, data: Any, name: str = "settings.json") -> Path:
    return write(ws / ".peri" / name, data)


def load(
    ws: Path, peri_home: Path, home: Path, env: dict[str, str] | None = None
) -> LoadedSettings:
    layers, warnings = read_layers(ws, peri_home)
    layers, warnings = add_claude_layers(layers, warnings, ws, home, env or {})
    return merge_layers(layers, env or {}, warnings=warnings)


# --- what is read --------------------------------------------------------------------------------


def test_the_users_claude_code_file_is_read_with_its_known_keys(
    ws: Path, peri_home: Path, home: Path
) -> None:
    path = cc_user(
        home,
        {
            "model": "claude-opus-4-1",
            "permissions": {"deny": ["Bash(curl:*)"], "defaultMode": "acceptEdits"},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "true"}]}]},
            "sandbox": {"enabled": True},
        },
    )
    loaded = load(ws, peri_home, home)
    assert loaded.settings.model == "claude-opus-4-1"
    assert loaded.settings.permission_mode == "accept-edits"
    assert loaded.settings.permissions == {"deny": ["Bash(curl:*)"]}
    assert loaded.settings.hooks["PreToolUse"][0]["matcher"] == "Bash"
    assert loaded.settings.sandbox.enabled is True
    assert loaded.source_of("permission_mode").where == str(path)
    (layer,) = loaded.layers
    assert layer.claude_code and layer.scope == "user"
    assert loaded.warnings == []


@pytest.mark.parametrize(
    ("claude", "peri"),
    [
        ("default", "default"),
        ("acceptEdits", "accept-edits"),
        ("plan", "plan"),
        ("bypassPermissions", "bypass"),
        ("dontAsk", "default"),
    ],
)
def test_default_mode_maps_to_peris_mode(
    ws: Path, peri_home: Path, home: Path, claude: str, peri: str
) -> None:
    cc_user(home, {"permissions": {"defaultMode": claude}})
    assert load(ws, peri_home, home).settings.permission_mode == peri


def test_unknown_keys_and_sub_keys_are_ignored_without_a_warning(
    ws: Path, peri_home: Path, home: Path
) -> None:
    cc_user(
        home,
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "env": {"FOO": "1"},
            "includeCoAuthoredBy": False,
            "cleanupPeriodDays": 3,
            "permissions": {"allow": ["Read"], "additionalDirectories": ["../x"]},
            "sandbox": {"enabled": True, "enableWeakerNestedSandbox": True},
            "hooks": {"Notification": [{"hooks": [{"command": "notify-send hi"}]}]},
            "provider": "openai",  # Peri's key, not Claude Code's: not read from its file
            "compact": {"protected_turns": 9},
        },
    )
    loaded = load(ws, peri_home, home)
    assert loaded.warnings == []
    assert loaded.settings.permissions == {"allow": ["Read"]}
    assert loaded.settings.sandbox.enabled is True
    assert loaded.settings.provider is None
    assert loaded.settings.compact.protected_turns == 3


def test_peris_own_file_wins_over_the_claude_code_file_at_the_same_level(
    ws: Path, peri_home: Path, home: Path
) -> None:
    cc_user(home, {"model": "claude-from-claude", "permissions": {"defaultMode": "plan"}})
    peri = peri_user(peri_home, {"model": "claude-from-peri"})
    loaded = load(ws, peri_home, home)
    assert loaded.settings.model == "claude-from-peri"
    assert loaded.source_of("model").where == str(peri)
    assert loaded.settings.permission_mode == "plan"  # what Peri's file does not say still applies
    cc_project(ws, {"model": "claude-from-project"})
    peri_project(ws, {"model": "claude-from-peri-project"})
    cc_project(ws, {"model": "claude-from-local"}, "settings.local.json")
    loaded = load(ws, peri_home, home)
    order = [(layer.scope, layer.claude_code) for layer in loaded.layers]
    assert order == [
        ("user", True),
        ("user", False),
        ("project", True),
        ("project", False),
        ("local", True),
    ]
    assert loaded.settings.model == "claude-from-local"  # a higher level beats a lower one


def test_a_wrong_type_drops_that_key_with_one_warning_naming_the_file(
    ws: Path, peri_home: Path, home: Path
) -> None:
    path = cc_user(
        home,
        {
            "model": 42,
            "permissions": {"deny": ["Bash(curl:*)"], "defaultMode": "sideways"},
            "hooks": [],
            "sandbox": {"enabled": "yes", "filesystem": {"denyRead": ["~/.secret"]}},
        },
    )
    loaded = load(ws, peri_home, home)
    assert loaded.settings.model is None
    assert loaded.settings.permission_mode == "default"
    assert loaded.settings.permissions == {"deny": ["Bash(curl:*)"]}  # the rest of the file holds
    assert loaded.settings.hooks == {}
    assert loaded.settings.sandbox.enabled is False
    assert loaded.settings.sandbox.filesystem.denyRead == ["~/.secret"]
    assert len(loaded.warnings) == 4, loaded.warnings
    assert all(w.startswith(f"{path}: ") and w.endswith("; ignored") for w in loaded.warnings)
    joined = "\n".join(loaded.warnings)
    for key in ("model", "permissions.defaultMode", "hooks", "sandbox.enabled"):
        assert f": {key}: " in joined, key


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ("x" * (2 << 20), "larger than"),
    ],
)
def test_a_broken_claude_code_file_is_a_warning_not_an_error(
    ws: Path, peri_home: Path, home: Path, text: str, said: str
) -> None:
    path = cc_user(home, text)
    loaded = load(ws, peri_home, home)
    (warning,) = loaded.warnings
    assert str(path) in warning and said in warning and "not read" in warning
    assert loaded.layers == ()


def test_a_fifo_or_a_directory_is_a_warning_never_a_hang(
    ws: Path, peri_home: Path, home: Path
) -> None:
    (home / ".claude").mkdir()
    os.mkfifo(home / ".claude" / "settings.json")
    (ws / ".claude" / "settings.json").mkdir(parents=True)
    loaded = load(ws, peri_home, home)
    assert len(loaded.warnings) == 2
    assert "FIFO" in loaded.warnings[0] and "directory" in loaded.warnings[1]


def test_a_project_file_that_leads_out_of_the_workspace_is_not_read(
    ws: Path, peri_home: Path, home: Path, tmp_path: Path
) -> None:
    outside = write(tmp_path / "elsewhere.json", {"model": "claude-outside"})
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").symlink_to(outside)
    loaded = load(ws, peri_home, home)
    (warning,) = loaded.warnings
    assert "outside" in warning and "not read" in warning
    assert loaded.settings.model is None


def test_the_same_file_as_user_and_project_is_read_once(peri_home: Path, home: Path) -> None:
    cc_user(home, {"hooks": {"Stop": [{"hooks": [{"command": "true"}]}]}})
    loaded = load(home, peri_home, home)  # Peri started in the home folder
    assert [(layer.scope, layer.claude_code) for layer in loaded.layers] == [("user", True)]


# --- the switch ----------------------------------------------------------------------------------


def test_claude_code_settings_false_in_user_settings_stops_reading_them(
    ws: Path, peri_home: Path, home: Path
) -> None:
    cc_user(home, {"permissions": {"deny": ["Bash"]}})
    cc_project(ws, {"model": "claude-x"})
    peri_user(peri_home, {"claudeCodeSettings": False})
    loaded = load(ws, peri_home, home)
    assert [layer.claude_code for layer in loaded.layers] == [False]
    assert loaded.settings.permissions == {} and loaded.warnings == []


def test_the_environment_switch_beats_user_settings(ws: Path, peri_home: Path, home: Path) -> None:
    cc_user(home, {"model": "claude-x"})
    assert load(ws, peri_home, home, {SWITCH_ENV: "0"}).settings.model is None
    peri_user(peri_home, {"claudeCodeSettings": False})
    assert load(ws, peri_home, home, {SWITCH_ENV: "1"}).settings.model == "claude-x"
    with pytest.raises(SettingsError, match=SWITCH_ENV):
        load(ws, peri_home, home, {SWITCH_ENV: "maybe"})


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_project_file_cannot_turn_claude_code_settings_off(
    ws: Path, peri_home: Path, home: Path, name: str
) -> None:
    cc_user(home, {"permissions": {"deny": ["Bash(curl:*)"]}})
    path = peri_project(ws, {"claudeCodeSettings": False}, name)
    loaded = load(ws, peri_home, home)
    assert loaded.settings.permissions == {"deny": ["Bash(curl:*)"]}
    (warning,) = loaded.warnings
    assert str(path) in warning and "claudeCodeSettings" in warning and "ignored" in warning
    assert loaded.source_of("claudeCodeSettings").scope == "default"


# --- the model -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "model"),
    [
        ("sonnet", "claude-sonnet-5-5"),
        ("Opus", "claude-opus-5-5"),
        ("haiku", "claude-haiku-4-5"),
        ("opus[1m]", "claude-opus-5-5"),
        ("sonnet[1m]", "claude-sonnet-5-5"),
    ],
)
def test_an_alias_is_its_familys_current_model(alias: str, model: str) -> None:
    assert claude_model(alias) == model


@pytest.mark.parametrize("alias", ["default", "opusplan", "best", "claude-x[200k]", " "])
def test_a_name_with_no_counterpart_is_dropped(alias: str) -> None:
    assert claude_model(alias) is None


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-1-20250805", "my-proxy/x"])
def test_a_full_model_id_is_kept(model: str) -> None:
    assert claude_model(model) == model


def test_the_claude_code_model_applies_only_with_anthropic(
    ws: Path, peri_home: Path, home: Path
) -> None:
    cc_project(ws, {"model": "claude-opus-4-1"})
    loaded = load(ws, peri_home, home)
    assert model_for(loaded, "anthropic") == "claude-opus-4-1"
    assert model_for(loaded, "openai") is None
    peri_user(peri_home, {"model": "gpt-5.5"})
    loaded = load(ws, peri_home, home)
    assert model_for(loaded, "openai") == "gpt-5.5"  # Peri's own below it still counts
    assert model_for(loaded, "anthropic") == "claude-opus-4-1"
    loaded = load(ws, peri_home, home, {"PERI_MODEL": "from-env"})
    assert model_for(loaded, "openai") == "from-env"


def test_only_the_levels_asked_for_are_read(ws: Path, peri_home: Path, home: Path) -> None:
    cc_user(home, "{ broken")  # not read, so no warning either
    cc_project(ws, {"model": "claude-x"})
    layers, warnings = add_claude_layers([], [], ws, home, {}, scopes=("project",))
    assert [(layer.scope, layer.claude_code) for layer in layers] == [("project", True)]
    assert warnings == []
