"""Claude Code's settings files through the real `peri -p` (issue 39): `~/.claude/settings.json`
with HOME pointed at a temporary folder, and a repository's `.claude/settings.json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Peri


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def claude_user(peri: Peri, data: Any) -> Path:
    return write(peri.home / ".claude" / "settings.json", data)


def claude_project(peri: Peri, data: Any) -> Path:
    return write(peri.workspace / ".claude" / "settings.json", data)


def peri_user(peri: Peri, data: Any) -> Path:
    return write(peri.home / ".peri" / "settings.json", data)


def touch_script(name: str = "ran") -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": "Bash", "input": {"command": f"touch {name}"}}]},
        {"text": "done"},
    ]


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("peri: warning:")]


def test_a_deny_rule_in_the_users_claude_code_file_blocks_a_call_even_in_bypass(
    peri: Peri,
) -> None:
    claude_user(peri, {"permissions": {"deny": ["Bash(touch:*)"]}, "includeCoAuthoredBy": False})
    peri.server.set_script(touch_script())
    done = peri.run("-p", "go", "--permission-mode", "bypass", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert not (peri.workspace / "ran").exists()
    (denial,) = json.loads(done.stdout)["permission_denials"]
    assert denial["tool_input"] == {"command": "touch ran"}
    assert ".claude/settings.json" in denial["reason"]
    assert warnings_of(done.stderr) == []  # its unknown keys are no mistake


def test_an_untrusted_claude_code_project_file_loosens_nothing_until_trusted(peri: Peri) -> None:
    claude_project(
        peri,
        {"permissions": {"defaultMode": "bypassPermissions", "allow": ["Bash(touch:*)"]}},
    )
    peri.server.set_script(touch_script())
    done = peri.run("-p", "go")
    assert done.returncode == 0, done.stderr
    assert not (peri.workspace / "ran").exists()
    (line,) = [w for w in warnings_of(done.stderr) if "not trusted" in w]
    assert 'permission_mode "bypass" (from .claude/settings.json)' in line
    assert "allow rules Bash(touch:*) (from .claude/settings.json)" in line

    peri.server.set_script(touch_script())
    done = peri.run("-p", "go", "--trust-workspace")
    assert done.returncode == 0, done.stderr
    assert (peri.workspace / "ran").exists()
    assert warnings_of(done.stderr) == []


def test_peris_own_file_wins_and_the_model_applies_only_with_anthropic(peri: Peri) -> None:
    claude_user(peri, {"model": "claude-from-claude-code"})
    peri.server.set_script([{"text": "hi"}])
    assert peri.run("-p", "hi").returncode == 0
    assert peri.model_calls()[-1]["model"] == "claude-from-claude-code"

    peri_user(peri, {"model": "claude-from-peri"})
    peri.server.set_script([{"text": "hi"}])
    assert peri.run("-p", "hi").returncode == 0
    assert peri.model_calls()[-1]["model"] == "claude-from-peri"


def test_a_claude_code_model_alias_reaches_the_provider_as_a_full_id(peri: Peri) -> None:
    claude_user(peri, {"model": "opus[1m]"})
    peri.server.set_script([{"text": "hi"}])
    assert peri.run("-p", "hi").returncode == 0
    assert peri.model_calls()[-1]["model"] == "claude-opus-5-5"


def test_a_claude_code_model_is_not_sent_to_openai(peri: Peri) -> None:
    peri.provider = "openai"
    claude_user(peri, {"model": "claude-from-claude-code"})
    peri.server.set_script([{"text": "hi"}])
    done = peri.run("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert peri.model_calls()[-1]["model"] != "claude-from-claude-code"


def test_claude_code_settings_false_in_user_settings_turns_them_off(peri: Peri) -> None:
    claude_user(peri, {"permissions": {"deny": ["Bash(touch:*)"]}})
    peri_user(peri, {"claudeCodeSettings": False})
    peri.server.set_script(touch_script())
    done = peri.run("-p", "go", "--permission-mode", "bypass")
    assert done.returncode == 0, done.stderr
    assert (peri.workspace / "ran").exists()


def test_a_project_file_cannot_turn_off_the_users_claude_code_deny_rules(peri: Peri) -> None:
    claude_user(peri, {"permissions": {"deny": ["Bash(touch:*)"]}})
    write(peri.workspace / ".peri" / "settings.json", {"claudeCodeSettings": False})
    peri.server.set_script(touch_script())
    done = peri.run("-p", "go", "--permission-mode", "bypass", "--trust-workspace")
    assert done.returncode == 0, done.stderr
    assert not (peri.workspace / "ran").exists()
    (line,) = warnings_of(done.stderr)
    assert ".peri/settings.json: claudeCodeSettings is read only from your user settings" in line


def test_a_broken_claude_code_file_is_a_warning_and_peri_runs(peri: Peri) -> None:
    claude_user(peri, "{ not json")
    peri.server.set_script([{"text": "hi"}])
    done = peri.run("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hi"
    (line,) = warnings_of(done.stderr)
    assert ".claude/settings.json: invalid JSON" in line and "not read" in line


def test_config_show_origin_json_names_the_file_of_each_value(peri: Peri) -> None:
    cc = claude_user(
        peri,
        {"model": "claude-x", "permissions": {"deny": ["Bash(curl:*)"], "defaultMode": "plan"}},
    )
    own = peri_user(peri, {"model": "claude-y"})
    project = claude_project(peri, {"permissions": {"allow": ["Bash(ls:*)"]}})
    done = peri.run("config", "--show-origin", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"files", "settings"}
    assert out["files"] == [
        {"path": str(cc), "scope": "user", "claude_code": True},
        {"path": str(own), "scope": "user", "claude_code": False},
        {"path": str(project), "scope": "project", "claude_code": True},
    ]
    rows = {(r["key"], r["origin"]): r for r in out["settings"]}
    assert set(next(iter(rows.values()))) == {
        "key",
        "value",
        "scope",
        "origin",
        "claude_code",
        "applied",
    }
    assert rows[("model", str(own))]["value"] == "claude-y"
    assert ("model", str(cc)) not in rows  # overridden: only the value in force is listed
    assert rows[("permission_mode", str(cc))] == {
        "key": "permission_mode",
        "value": "plan",
        "scope": "user",
        "origin": str(cc),
        "claude_code": True,
        "applied": True,
    }
    assert rows[("permissions.deny", str(cc))]["value"] == ["Bash(curl:*)"]
    allow = rows[("permissions.allow", str(project))]
    assert allow["applied"] is False and allow["scope"] == "project"  # not trusted

    text = peri.run("config", "--show-origin")
    assert text.returncode == 0, text.stderr
    assert f"permission_mode = plan  ({cc})" in text.stdout
    assert peri.run("config").returncode == 2
