"""Settings files, their merge, and the environment (CONTRACT.md §3)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.settings import (
    CompactSettings,
    Settings,
    Source,
    load_settings,
    peri_home_from_env,
)
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


def user_file(peri_home: Path, data: Any) -> Path:
    path = peri_home / "settings.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def project_file(ws: Path, data: Any) -> Path:
    path = ws / ".peri" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def local_file(ws: Path, data: Any) -> Path:
    path = ws / ".peri" / "settings.local.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def load(ws: Path, peri_home: Path, **env: str) -> Settings:
    return load_settings(ws, peri_home, env).settings


def error(ws: Path, peri_home: Path, **env: str) -> str:
    with pytest.raises(SettingsError) as info:
        load_settings(ws, peri_home, env)
    message = str(info.value)
    assert "\n" not in message
    assert "Traceback" not in message
    assert "pydantic" not in message.lower()
    return message


# --- defaults and files ------------------------------------------------------------------------


def test_no_files_gives_defaults(ws: Path, peri_home: Path) -> None:
    loaded = load_settings(ws, peri_home, {})
    s = loaded.settings
    assert loaded.warnings == []
    assert loaded.files == []
    assert s.model is None
    assert s.provider is None
    assert s.permission_mode == "default"
    assert s.compact == CompactSettings(
        micro_compact_threshold=0.75,
        auto_compact_threshold=0.95,
        protected_turns=3,
        tool_result_keep_chars=200,
    )
    assert s.guides.extra_paths == []
    assert s.guides.budget_bytes == 40_000
    assert s.meta_harness == {}
    assert s.mcpServers == {}
    assert s.context_window is None
    assert s.smart_compact_enabled is None
    assert (s.disable_compact, s.disable_auto_compact) == (False, False)


def test_user_file_is_read(ws: Path, peri_home: Path) -> None:
    path = user_file(peri_home, {"model": "m-user", "permission_mode": "plan"})
    loaded = load_settings(ws, peri_home, {})
    assert loaded.settings.model == "m-user"
    assert loaded.settings.permission_mode == "plan"
    assert loaded.files == [path]


def test_project_wins_key_by_key(ws: Path, peri_home: Path) -> None:
    user_file(peri_home, {"model": "m-user", "provider": "openai", "context_window": 1000})
    project_file(ws, {"model": "m-project", "context_window": 2000})
    s = load(ws, peri_home)
    assert s.model == "m-project"
    assert s.provider == "openai"  # only in the user file: kept
    assert s.context_window == 2000


def test_nested_compact_merges_key_by_key(ws: Path, peri_home: Path) -> None:
    user_file(peri_home, {"compact": {"protected_turns": 5, "micro_compact_threshold": 0.5}})
    project_file(ws, {"compact": {"protected_turns": 7}})
    s = load(ws, peri_home)
    assert s.compact.protected_turns == 7
    assert s.compact.micro_compact_threshold == 0.5
    assert s.compact.auto_compact_threshold == 0.95


def test_maps_merge_entry_by_entry_and_entries_replace_whole(ws: Path, peri_home: Path) -> None:
    user_file(
        peri_home,
        {
            "meta_harness": {"Skills": False, "BuiltInSubagents": False},
            "mcpServers": {"time": {"command": "a", "args": ["x"]}, "db": {"command": "d"}},
        },
    )
    project_file(ws, {"meta_harness": {"Skills": True}})
    local_file(ws, {"meta_harness": {"Other": False}})
    s = load(ws, peri_home)
    assert s.meta_harness == {"Skills": True, "BuiltInSubagents": False, "Other": False}
    assert s.mcpServers == {"time": {"command": "a", "args": ["x"]}, "db": {"command": "d"}}


def test_item5_project_mcp_servers_stay_apart_from_the_users(ws: Path, peri_home: Path) -> None:
    user = user_file(peri_home, {"mcpServers": {"time": {"command": "a"}}})
    project = project_file(ws, {"mcpServers": {"time": {"command": "evil"}, "x": {"url": "u"}}})
    loaded = load_settings(ws, peri_home, {})
    assert loaded.settings.mcpServers == {"time": {"command": "a"}}  # never a user server
    servers = [(m.name, m.config, m.source.scope, m.source.where) for m in loaded.mcp_servers]
    assert servers == [
        ("time", {"command": "a"}, "user", str(user)),
        ("time", {"command": "evil"}, "project", str(project)),
        ("x", {"url": "u"}, "project", str(project)),
    ]
    assert [m.from_workspace for m in loaded.mcp_servers] == [False, True, True]


def test_lists_are_replaced_not_concatenated(ws: Path, peri_home: Path) -> None:
    user_file(peri_home, {"guides": {"extra_paths": ["~/a.md"], "budget_bytes": 100}})
    project_file(ws, {"guides": {"extra_paths": ["b.md"]}})
    s = load(ws, peri_home)
    assert s.guides.extra_paths == ["b.md"]
    assert s.guides.budget_bytes == 100


def test_legacy_smart_compact_enabled_is_accepted(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"smart_compact_enabled": True})
    loaded = load_settings(ws, peri_home, {})
    assert loaded.settings.smart_compact_enabled is True
    assert loaded.warnings == []


def test_empty_file_means_no_settings(ws: Path, peri_home: Path) -> None:
    project_file(ws, "  \n")
    assert load(ws, peri_home) == Settings()


def test_integer_accepted_where_a_number_is_expected(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"compact": {"auto_compact_threshold": 1}})
    assert load(ws, peri_home).compact.auto_compact_threshold == 1.0


# --- unknown keys ------------------------------------------------------------------------------


def test_unknown_keys_warn_with_file_and_dotted_path(ws: Path, peri_home: Path) -> None:
    user = user_file(peri_home, {"modle": "x"})
    project = project_file(ws, {"compact": {"protectd_turns": 2, "protected_turns": 4}})
    loaded = load_settings(ws, peri_home, {})
    assert loaded.warnings == [
        f"{user}: unknown key modle; ignored",
        f"{project}: unknown key compact.protectd_turns; ignored",
    ]
    assert loaded.settings.compact.protected_turns == 4


def test_unknown_key_with_a_bad_value_still_only_warns(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"future_thing": {"deep": [1, 2]}})
    loaded = load_settings(ws, peri_home, {})
    assert len(loaded.warnings) == 1
    assert "future_thing" in loaded.warnings[0]


# --- errors ------------------------------------------------------------------------------------


def test_wrong_type_names_file_and_dotted_key(ws: Path, peri_home: Path) -> None:
    path = project_file(ws, {"compact": {"protected_turns": "three"}})
    assert error(ws, peri_home) == (
        f'{path}: compact.protected_turns: expected an integer, got "three"'
    )


def test_error_in_user_file_names_the_user_file(ws: Path, peri_home: Path) -> None:
    path = user_file(peri_home, {"permission_mode": "yolo"})
    project_file(ws, {"permission_mode": "plan"})
    message = error(ws, peri_home)
    assert message.startswith(f"{path}: permission_mode: expected ")
    assert "'accept-edits'" in message
    assert '"yolo"' in message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"model": 5}, "model: expected a string, got 5"),
        ({"provider": "gemini"}, "provider: expected 'anthropic' or 'openai', got \"gemini\""),
        (
            {"meta_harness": {"Skills": "no"}},
            'meta_harness.Skills: expected true or false, got "no"',
        ),
        ({"guides": {"extra_paths": ["a", 3]}}, "guides.extra_paths[1]: expected a string, got 3"),
        ({"guides": "x"}, 'guides: expected an object, got "x"'),
        ({"compact": {"protected_turns": 2.5}}, "compact.protected_turns: expected an integer"),
        ({"compact": {"auto_compact_threshold": 1.5}}, "compact.auto_compact_threshold: must be"),
        ({"compact": {"protected_turns": True}}, "compact.protected_turns: expected an integer"),
        ({"context_window": 0}, "context_window: must be greater than 0, got 0"),
        ({"guides": {"budget_bytes": -1}}, "guides.budget_bytes: must be greater than 0"),
        ({"disable_compact": "1"}, 'disable_compact: expected true or false, got "1"'),
    ],
)
def test_wrong_values_are_clear_errors(
    ws: Path, peri_home: Path, data: dict[str, Any], expected: str
) -> None:
    path = project_file(ws, data)
    message = error(ws, peri_home)
    assert message.startswith(f"{path}: {expected}")


def test_several_problems_on_one_line(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"model": 1, "compact": {"protected_turns": "x"}})
    message = error(ws, peri_home)
    assert "model: expected a string" in message
    assert "compact.protected_turns: expected an integer" in message


def test_long_bad_values_are_not_echoed(ws: Path, peri_home: Path) -> None:
    secret = "sk-ant-" + "A" * 60
    project_file(ws, {"compact": {"protected_turns": secret}})
    message = error(ws, peri_home)
    assert secret not in message
    assert "AAAAAAAAAA" not in message
    assert "a string of 67 characters" in message


def test_invalid_json_names_file_and_position(ws: Path, peri_home: Path) -> None:
    path = project_file(ws, '{"model": "x",\n  "provider": }')
    message = error(ws, peri_home)
    assert message.startswith(f"{path}: invalid JSON: ")
    assert "line 2" in message


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "a list"), ('"x"', "a string")])
def test_non_object_file_is_an_error(ws: Path, peri_home: Path, text: str, kind: str) -> None:
    path = user_file(peri_home, text)
    assert error(ws, peri_home) == f"{path}: expected a JSON object at the top level, got {kind}"


def test_settings_path_that_is_a_directory_is_an_error(ws: Path, peri_home: Path) -> None:
    (ws / ".peri" / "settings.json").mkdir(parents=True)
    assert "is a directory" in error(ws, peri_home)


def test_non_utf8_file_is_an_error(ws: Path, peri_home: Path) -> None:
    path = ws / ".peri" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'{"model": "caf\xe9"}')
    assert error(ws, peri_home) == f"{path}: not valid UTF-8"


# --- environment -------------------------------------------------------------------------------


def test_env_provider_and_model_beat_files(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"model": "file-model", "provider": "anthropic"})
    s = load(ws, peri_home, PERI_MODEL="env-model", PERI_PROVIDER="openai")
    assert (s.model, s.provider) == ("env-model", "openai")


def test_empty_env_values_are_unset(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"model": "file-model", "context_window": 10})
    s = load(ws, peri_home, PERI_MODEL="", PERI_CONTEXT_WINDOW="", COMPACT_THRESHOLD="")
    assert s.model == "file-model"
    assert s.context_window == 10
    assert s.compact.auto_compact_threshold == 0.95


def test_bad_peri_provider_is_an_error(ws: Path, peri_home: Path) -> None:
    message = error(ws, peri_home, PERI_PROVIDER="gemini")
    assert message.startswith("PERI_PROVIDER: ")
    assert '"gemini"' in message


def test_context_window_from_env(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"context_window": 1000})
    assert load(ws, peri_home, PERI_CONTEXT_WINDOW="32768").context_window == 32768


@pytest.mark.parametrize("value", ["0", "-5", "lots", "1.5", "1e6"])
def test_bad_context_window_is_an_error(ws: Path, peri_home: Path, value: str) -> None:
    message = error(ws, peri_home, PERI_CONTEXT_WINDOW=value)
    assert message.startswith("PERI_CONTEXT_WINDOW: expected a positive")
    assert value in message


def test_compact_threshold_overrides_the_auto_threshold(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"compact": {"auto_compact_threshold": 0.9, "protected_turns": 6}})
    s = load(ws, peri_home, COMPACT_THRESHOLD="0.6")
    assert s.compact.auto_compact_threshold == 0.6
    assert s.compact.protected_turns == 6
    assert s.compact.micro_compact_threshold == 0.75


@pytest.mark.parametrize("value", ["0", "1", "0.0", "1.0", " 0.5 "])
def test_compact_threshold_bounds_are_inclusive(ws: Path, peri_home: Path, value: str) -> None:
    assert load(ws, peri_home, COMPACT_THRESHOLD=value).compact.auto_compact_threshold == float(
        value
    )


@pytest.mark.parametrize("value", ["1.01", "-0.1", "high", "nan", "inf", "80%"])
def test_bad_compact_threshold_is_an_error(ws: Path, peri_home: Path, value: str) -> None:
    message = error(ws, peri_home, COMPACT_THRESHOLD=value)
    assert message.startswith("COMPACT_THRESHOLD: expected a number from 0.0 to 1.0, got ")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", True),
        ("true", True),
        ("yes", True),
        ("", False),
        ("0", False),
        ("false", False),
        ("FALSE", False),
    ],
)
def test_disable_flags_from_env(ws: Path, peri_home: Path, value: str, expected: bool) -> None:
    s = load(ws, peri_home, DISABLE_COMPACT=value, DISABLE_AUTO_COMPACT=value)
    assert s.disable_compact is expected
    assert s.disable_auto_compact is expected


def test_disable_flags_are_independent(ws: Path, peri_home: Path) -> None:
    s = load(ws, peri_home, DISABLE_AUTO_COMPACT="1")
    assert (s.disable_compact, s.disable_auto_compact) == (False, True)


def test_file_error_reported_even_with_valid_env(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"model": 3})
    assert error(ws, peri_home, PERI_MODEL="ok").endswith("model: expected a string, got 3")


def test_peri_home_from_env() -> None:
    assert peri_home_from_env({"PERI_HOME": "/srv/peri"}) == Path("/srv/peri")
    assert peri_home_from_env({}) == Path.home() / ".peri"
    assert peri_home_from_env({"PERI_HOME": ""}) == Path.home() / ".peri"
    assert peri_home_from_env({"PERI_HOME": "~/state"}) == Path.home() / "state"


def test_settings_are_immutable() -> None:
    s = Settings()
    with pytest.raises(ValueError):
        s.model = "x"


# --- provenance, the local file, withheld values ------------------------------------------------


def test_local_file_wins_over_project_and_every_value_keeps_its_file(
    ws: Path, peri_home: Path
) -> None:
    user = user_file(peri_home, {"model": "u", "compact": {"protected_turns": 5}})
    project = project_file(ws, {"model": "p", "provider": "openai"})
    local = local_file(ws, {"model": "l", "compact": {"tool_result_keep_chars": 9}})
    loaded = load_settings(ws, peri_home, {"PERI_CONTEXT_WINDOW": "1000"})
    assert loaded.settings.model == "l"
    assert loaded.files == [user, project, local]
    assert [layer.scope for layer in loaded.layers] == ["user", "project", "local"]
    assert loaded.source_of("model").scope == "local" and loaded.source_of("model").where == str(
        local
    )
    assert loaded.source_of("provider").where == str(project)
    assert loaded.source_of("compact.protected_turns").where == str(user)
    assert loaded.source_of("compact.tool_result_keep_chars").scope == "local"
    assert loaded.source_of("compact.micro_compact_threshold").scope == "default"
    assert loaded.source_of("context_window") == Source("env", "PERI_CONTEXT_WINDOW")
    assert str(loaded.source_of("permission_mode")) == "built-in default"


def test_local_file_errors_name_the_local_file(ws: Path, peri_home: Path) -> None:
    path = local_file(ws, {"permission_mode": 3})
    assert error(ws, peri_home).startswith(f"{path}: permission_mode: expected")


def test_withheld_values_are_left_out_and_listed(ws: Path, peri_home: Path) -> None:
    user_file(peri_home, {"permission_mode": "plan"})
    project = project_file(ws, {"permission_mode": "bypass", "model": "m"})
    loaded = load_settings(ws, peri_home, {}, withhold=[(project, "permission_mode")])
    assert loaded.settings.permission_mode == "plan"
    assert loaded.settings.model == "m"
    assert loaded.withheld == ((project, "permission_mode"),)


def test_scrub_env_lists_add_up_across_files(ws: Path, peri_home: Path) -> None:
    user_file(peri_home, {"scrub_env": ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"]})
    project_file(ws, {"scrub_env": []})  # a repository cannot take a name back
    local_file(ws, {"scrub_env": ["NPM_TOKEN", "GITHUB_TOKEN"]})
    s = load(ws, peri_home)
    assert s.scrub_env == ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN"]
    assert Settings().scrub_env == []
    project_file(ws, {"scrub_env": "GITHUB_TOKEN"})
    assert "scrub_env: expected a list" in error(ws, peri_home)


# --- items 13 and 16: hostile files --------------------------------------------------------------


def test_item13_deeply_nested_settings_are_one_clear_error(ws: Path, peri_home: Path) -> None:
    path = project_file(ws, '{"mcpServers": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    assert error(ws, peri_home) == f"{path}: nested more than 64 levels deep"


def test_item13_nesting_just_under_the_limit_is_fine(ws: Path, peri_home: Path) -> None:
    project_file(ws, '{"mcpServers": {"x": ' + "[" * 60 + "]" * 60 + "}}")  # 62 levels in all
    (server,) = load_settings(ws, peri_home, {}).mcp_servers
    assert json.dumps(server.config) == "[" * 60 + "]" * 60


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_item16_fifo_settings_file_is_an_error_not_a_hang(
    ws: Path, peri_home: Path, name: str
) -> None:
    (ws / ".peri").mkdir()
    os.mkfifo(ws / ".peri" / name)
    message = error(ws, peri_home)
    assert message.startswith(f"{ws / '.peri' / name}: is a FIFO")


def test_item16_oversized_settings_file_is_refused(ws: Path, peri_home: Path) -> None:
    path = project_file(ws, '{"model": "' + "x" * (2 << 20) + '"}')
    assert error(ws, peri_home).startswith(f"{path}: is larger than 1 MiB")


def test_huge_integer_is_a_clear_error(ws: Path, peri_home: Path) -> None:
    path = project_file(ws, '{"context_window": ' + "9" * 5000 + "}")
    assert error(ws, peri_home).startswith(f"{path}: invalid JSON")


def test_unknown_key_warning_shows_control_characters(ws: Path, peri_home: Path) -> None:
    project_file(ws, {"evil\u001b]52;c;x\u0007": 1})
    (warning,) = load_settings(ws, peri_home, {}).warnings
    assert "\x1b" not in warning and "\x07" not in warning and "␛" in warning
