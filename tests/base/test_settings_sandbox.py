"""The `sandbox` settings object: its keys and defaults (CONTRACT.md §10), and an untrusted
workspace that may only narrow it."""

import json
from pathlib import Path

import pytest

from peri_cli.base.settings import load_settings
from peri_cli.base.settings_check import SettingsError
from peri_cli.base.settings_sandbox import SandboxSettings, merge_sandbox, sandbox_from_mapping

USER = Path("/u/settings.json")
PROJECT = Path("/ws/.peri/settings.json")


def test_defaults_are_the_contracts() -> None:
    s = SandboxSettings()
    assert (s.enabled, s.autoAllowBashIfSandboxed, s.allowUnsandboxedCommands) == (
        False,
        True,
        True,
    )
    assert s.failIfUnavailable is False and s.excludedCommands == []
    assert s.filesystem.allowWrite == s.filesystem.denyRead == []
    assert s.network.allowedDomains == [] and s.network.allowLocalBinding is False
    assert s.network.allowAllUnixSockets is False and s.network.allowUnixSockets == []


def test_trusted_files_merge_lists_add_up_and_later_switches_win() -> None:
    merged, warnings = merge_sandbox(
        [
            (USER, True, {"enabled": True, "filesystem": {"allowWrite": ["/a"]}}),
            (PROJECT, True, {"enabled": False, "filesystem": {"allowWrite": ["/b"]}}),
        ]
    )
    assert merged.enabled is False and merged.filesystem.allowWrite == ["/a", "/b"]
    assert warnings == []


def test_an_untrusted_workspace_only_narrows() -> None:
    user = {
        "enabled": True,
        "network": {"allowedDomains": ["pypi.org"]},
        "filesystem": {"denyRead": ["/x"]},
    }
    project = {
        "enabled": False,
        "autoAllowBashIfSandboxed": False,
        "allowUnsandboxedCommands": True,
        "excludedCommands": ["docker"],
        "filesystem": {"allowWrite": ["/etc"], "denyRead": ["/y"], "denyWrite": ["/z"]},
        "network": {"allowedDomains": ["evil.com"], "allowAllUnixSockets": True},
    }
    merged, warnings = merge_sandbox([(USER, True, user), (PROJECT, False, project)])
    assert merged.enabled is True  # cannot be turned off
    assert merged.autoAllowBashIfSandboxed is False  # stricter: taken
    assert merged.excludedCommands == [] and merged.filesystem.allowWrite == []
    assert merged.filesystem.denyRead == ["/x", "/y"] and merged.filesystem.denyWrite == ["/z"]
    assert merged.network.allowedDomains == ["pypi.org"]
    assert merged.network.allowAllUnixSockets is False
    ignored = " ".join(warnings)
    for key in ("enabled", "excludedCommands", "allowWrite", "allowedDomains", "UnixSockets"):
        assert key in ignored
    assert "allowUnsandboxedCommands" in ignored


def test_a_wrong_type_names_the_file_and_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"sandbox": {"enabled": "yes"}}))
    with pytest.raises(SettingsError, match=r"settings.json: sandbox.enabled: expected true"):
        load_settings(tmp_path, home, {})


def test_unknown_keys_warn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    body = {"sandbox": {"enabled": True, "network": {"allowedDomain": []}}}
    (home / "settings.json").write_text(json.dumps(body))
    loaded = load_settings(tmp_path, home, {})
    assert loaded.settings.sandbox.enabled is True
    assert any("sandbox.network.allowedDomain" in w for w in loaded.warnings)


def test_an_options_object_is_checked() -> None:
    assert sandbox_from_mapping({"enabled": True}, "PeriOptions.sandbox").enabled
    with pytest.raises(SettingsError, match=r"PeriOptions\.sandbox"):
        sandbox_from_mapping({"enabled": 1}, "PeriOptions.sandbox")
