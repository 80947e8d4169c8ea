"""Plugin files as untrusted input (issue 39): manifests, the parts they name, the fingerprint of
what runs code, and which plugins the settings switch on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from peri_cli.base.settings import SettingsLayer
from peri_cli.extensions.plugins.active import enabled_keys
from peri_cli.extensions.plugins.fingerprint import changes, fingerprint
from peri_cli.extensions.plugins.manifest import (
    MAX_MANIFEST_BYTES,
    ManifestError,
    read_marketplace,
    read_plugin_manifest,
)
from peri_cli.extensions.plugins.parts import describe, read_parts
from peri_cli.extensions.plugins.registry import installed


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_marketplace_sources_and_skipped_entries(tmp_path: Path) -> None:
    listed = [
        {"name": "a", "source": "./plugins/a"},
        {"name": "b", "source": {"source": "github", "repo": "owner/b", "ref": "v1"}},
        {"name": "c", "source": {"source": "url", "url": "--upload-pack=evil"}},
        {"name": "d", "source": "/etc"},
        {"name": "a", "source": "./again"},
        "nonsense",
    ]
    write(
        tmp_path / ".claude-plugin/marketplace.json", json.dumps({"name": "m", "plugins": listed})
    )
    found = read_marketplace(tmp_path)
    assert [p.name for p in found.plugins] == ["a", "b"]
    assert found.plugins[1].source.git == "https://github.com/owner/b.git"
    assert found.plugins[1].source.ref == "v1"
    assert len(found.problems) == 4 and any("not a git URL" in p for p in found.problems)


@pytest.mark.parametrize(
    "content",
    ["{", "[]", json.dumps({"name": "../up", "plugins": []}), " " * (MAX_MANIFEST_BYTES + 1)],
)
def test_a_bad_marketplace_file_is_one_clear_error(tmp_path: Path, content: str) -> None:
    write(tmp_path / ".claude-plugin/marketplace.json", content)
    with pytest.raises(ManifestError, match=r"marketplace\.json"):
        read_marketplace(tmp_path)


def test_a_manifest_that_is_a_fifo_or_a_link_out_is_refused(tmp_path: Path) -> None:
    (tmp_path / "p/.claude-plugin").mkdir(parents=True)
    os.mkfifo(tmp_path / "p/.claude-plugin/plugin.json")
    with pytest.raises(ManifestError, match=r"plugin\.json"):
        read_plugin_manifest(tmp_path / "p", "p")
    secret = write(tmp_path / "secret.json", '{"name": "x"}')
    (tmp_path / "q/.claude-plugin").mkdir(parents=True)
    (tmp_path / "q/.claude-plugin/plugin.json").symlink_to(secret)
    with pytest.raises(ManifestError):
        read_plugin_manifest(tmp_path / "q", "q")


def test_parts_stay_inside_the_plugin(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (tmp_path / "elsewhere").mkdir()
    (root / "commands").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path / "elsewhere")
    manifest = {"name": "p", "agents": ["../elsewhere", "./out"], "hooks": 3}
    write(root / ".claude-plugin/plugin.json", json.dumps(manifest))
    write(
        root / ".mcp.json",
        json.dumps({"mcpServers": {"s": {"command": "${CLAUDE_PLUGIN_ROOT}/s"}}}),
    )
    parts = read_parts(root, "p@m", "p")
    assert parts.folders["commands"] == (root / "commands",)
    assert parts.folders["agents"] == ()
    assert len([p for p in parts.problems if "leads outside the plugin" in p]) == 2
    assert any("`hooks` must be a path or an object" in p for p in parts.problems)
    server = parts.mcp_servers["s"]
    assert server["command"] == f"{root}/s"
    assert server["env"] == {"CLAUDE_PLUGIN_ROOT": str(root), "PERI_PLUGIN_ROOT": str(root)}


def test_the_fingerprint_sees_code_and_command_lines_not_prose(tmp_path: Path) -> None:
    write(tmp_path / "hooks/check.py", "print(1)")
    write(tmp_path / "commands/c.md", "---\nallowed-tools: Bash(git:*)\n---\nRun !`git status`\n")
    write(tmp_path / "README.md", "words")
    os.mkfifo(tmp_path / "hooks/pipe")  # never opened: the walk would hang on it
    before = fingerprint(tmp_path)
    write(tmp_path / "README.md", "other words")
    write(tmp_path / "commands/c.md", "---\nallowed-tools: Bash(git:*)\n---\nSay !`git status`\n")
    assert changes(before, fingerprint(tmp_path)) == []
    write(tmp_path / "commands/c.md", "---\nallowed-tools: Bash(curl:*)\n---\nRun !`git status`\n")
    write(tmp_path / "hooks/check.py", "print(2)")
    write(tmp_path / "hooks/new.sh", "true")
    assert changes(before, fingerprint(tmp_path)) == [
        "changed: commands/c.md",
        "changed: hooks/check.py",
        "added: hooks/new.sh",
    ]


def test_a_workspace_switches_a_plugin_on_only_when_trusted() -> None:
    user = SettingsLayer("user", Path("u"), {"enabledPlugins": {"a@m": True, "b@m": True}})
    project = SettingsLayer("project", Path("p"), {"enabledPlugins": {"b@m": False, "c@m": True}})
    assert enabled_keys([user, project], trusted=False) == (["a@m", "b@m"], ["c@m"])
    assert enabled_keys([user, project], trusted=True) == (["a@m", "c@m"], [])


def test_what_a_plugin_brings_is_shown_with_its_control_characters_visible(tmp_path: Path) -> None:
    root = tmp_path / "p"
    manifest = {"name": "p", "description": "nice\x1b]0;pwned\x07 plugin"}
    write(root / ".claude-plugin/plugin.json", json.dumps(manifest))
    write(root / "commands/\x1b[2Jwipe.md", "---\ndescription: d\n---\nx\n")
    shown = describe(read_parts(root, "p@m", "p"))
    assert "\x1b" not in shown and "\x07" not in shown
    assert "nice" in shown and "wipe" in shown


def test_a_hand_written_entry_in_installed_json_is_passed_over(tmp_path: Path) -> None:
    entries = {"a@": {}, "../x@m": {}, "ok@m": {"version": "1"}, "b@m": "nonsense"}
    write(tmp_path / "plugins" / "installed.json", json.dumps(entries))
    assert list(installed(tmp_path)) == ["ok@m"]


def test_a_plugin_past_the_size_cap_is_refused_before_a_copy(tmp_path: Path) -> None:
    """A marketplace entry can point at a folder of any size: past 256 MiB (a sparse file, so
    the test writes nothing) the install stops before one byte is copied into PERI_HOME."""
    from peri_cli.extensions.plugins.install import MAX_PLUGIN_BYTES, add_marketplace, stage
    from peri_cli.extensions.plugins.registry import PluginError

    market = tmp_path / "market"
    plugin = {"name": "big", "source": "./plugins/big"}
    write(
        market / ".claude-plugin/marketplace.json", json.dumps({"name": "m", "plugins": [plugin]})
    )
    write(market / "plugins/big/.claude-plugin/plugin.json", json.dumps({"name": "big"}))
    with open(market / "plugins/big/blob.bin", "wb") as blob:
        blob.truncate(MAX_PLUGIN_BYTES + 1)
    home = tmp_path / "home"
    add_marketplace(home, str(market), cwd=tmp_path)
    with pytest.raises(PluginError, match="larger than 256 MiB; not installed"):
        stage(home, "big@m")
    staged = list((home / "plugins").rglob("blob.bin"))
    assert staged == []
