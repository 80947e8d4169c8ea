"""Plugins end to end (issue 39): `peri plugin` adds a local git marketplace written in Claude
Code's layout (tests/fixtures/plugins/market), installs plugins from it, and the real `peri -p`
uses what they bring (a skill, an agent, an MCP server) against the fake server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Peri, system_text, texts
from tests.e2e.test_mcp_e2e import TIME_SERVER, execute, tool_results

MARKET = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "market"
NAME = "peri-test-market"


def git(*args: str, cwd: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """The fixture marketplace as a git repository of its own."""
    repo = tmp_path / "market"
    shutil.copytree(MARKET, repo)
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "plugins", cwd=repo)
    return repo


def plugin(peri: Peri, *args: str) -> subprocess.CompletedProcess[str]:
    return peri.run("plugin", *args)


def added(peri: Peri, market: Path) -> None:
    done = plugin(peri, "marketplace", "add", market.as_uri())
    assert done.returncode == 0, done.stderr
    assert f"Added marketplace {NAME} (7 plugins)." in done.stdout
    # entries that name a path out of the marketplace or a name that is not plain are skipped
    assert "plugins[7]: `name` must be a plain name; skipped" in done.stderr
    assert "plugins[8].source: a path inside the marketplace" in done.stderr


def installed(peri: Peri, *names: str) -> None:
    for name in names:
        done = plugin(peri, "install", f"{name}@{NAME}", "--yes")
        assert done.returncode == 0, done.stderr


def test_install_asks_and_without_a_terminal_needs_yes(peri: Peri, market: Path) -> None:
    added(peri, market)
    done = plugin(peri, "install", f"peri-time@{NAME}")
    assert done.returncode == 1
    assert "mcpServers:" in done.stdout and "plugin-time: mcp-server-time" in done.stdout
    assert "run again with --yes" in done.stderr
    assert not (peri.home / ".peri" / "plugins" / NAME / "peri-time").exists()
    installed(peri, "peri-time")
    root = peri.home / ".peri" / "plugins" / NAME / "peri-time"
    assert (root / ".claude-plugin" / "plugin.json").is_file()
    settings = json.loads((peri.home / ".peri" / "settings.json").read_text())
    assert settings["enabledPlugins"] == {f"peri-time@{NAME}": True}
    rows = json.loads(plugin(peri, "list", "--json").stdout)
    assert rows == [
        {"name": f"peri-time@{NAME}", "version": "0.1.0", "enabled": True, "path": str(root)}
    ]
    assert plugin(peri, "disable", f"peri-time@{NAME}").returncode == 0
    assert json.loads(plugin(peri, "list", "--json").stdout)[0]["enabled"] is False
    assert plugin(peri, "uninstall", f"peri-time@{NAME}").returncode == 0
    assert not root.exists() and json.loads(plugin(peri, "list", "--json").stdout) == []


def test_a_broken_manifest_is_refused_with_its_file(peri: Peri, market: Path) -> None:
    added(peri, market)
    done = plugin(peri, "install", f"peri-broken@{NAME}", "--yes")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert ".claude-plugin/plugin.json: not valid JSON" in done.stderr
    assert not (peri.home / ".peri" / "plugins" / NAME / "peri-broken").exists()
    bad = plugin(peri, "install", "no-at-sign")
    assert bad.returncode == 1 and "NAME@MARKETPLACE" in bad.stderr


def test_the_skill_agent_and_server_a_plugin_brings_are_used(peri: Peri, market: Path) -> None:
    added(peri, market)
    installed(peri, "peri-skill", "peri-agents", "peri-time")
    peri.extra_env["PATH"] = f"{TIME_SERVER.parent}:/usr/bin:/bin"
    agent = {"prompt": "kid: review", "description": "r", "subagent_type": "plugin-reviewer"}
    peri.server.set_script(
        [
            {"when": "main", "tool_calls": [{"name": "Skill", "input": {"name": "haiku-writer"}}]},
            {"when": "main", "tool_calls": [{"name": "Agent", "input": agent}]},
            {"when": "kid:", "text": "no bugs"},
            {"when": "main", **execute("mcp__plugin-time__get_current_time", {"timezone": "UTC"})},
            {"when": "main", "text": "done"},
        ]
    )
    result = peri.json("-p", "main: poem, review, time", "--permission-mode", "bypass")
    assert result["result"] == "done", result
    calls = peri.model_calls()
    main = [b for b in calls if "main:" in json.dumps(b["messages"][0])]
    assert "haiku-writer" in system_text(main[0])
    assert "PLUGIN-SKILL-BODY-MARKER" in tool_results(main[1])[-1]
    kid = next(b for b in calls if "kid: review" in json.dumps(b["messages"][0]))
    assert "PLUGIN-REVIEWER-MARKER" in json.dumps(kid["system"])
    assert '"timezone": "UTC"' in tool_results(main[3])[-1]


def test_a_plugins_hooks_add_context_and_block_with_their_message(peri: Peri, market: Path) -> None:
    added(peri, market)
    installed(peri, "peri-context", "peri-guard")
    peri.server.set_script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "rm -rf build"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": "echo kept"}}]},
            {"text": "done"},
        ]
    )
    result = peri.json("-p", "tidy up", "--permission-mode", "bypass")
    assert result["result"] == "done", result
    first, second, third = peri.model_calls()
    assert "PLUGIN-CONTEXT-MARKER" in json.dumps(first["messages"])  # SessionStart's context
    blocked = tool_results(second)[-1]
    assert "PLUGIN-GUARD: rm -rf is not allowed here" in blocked  # its systemMessage, as the why
    assert "kept" in tool_results(third)[-1]  # other commands run
    hooks = plugin(peri, "list", "--json")
    assert len(json.loads(hooks.stdout)) == 2


def test_a_plugin_the_untrusted_workspace_enables_stays_off(peri: Peri, market: Path) -> None:
    added(peri, market)
    installed(peri, "peri-skill")
    plugin(peri, "disable", f"peri-skill@{NAME}")
    project = peri.workspace / ".claude" / "settings.json"  # Claude Code's own file
    project.parent.mkdir(parents=True)
    project.write_text(json.dumps({"enabledPlugins": {f"peri-skill@{NAME}": True}}))
    peri.server.set_script([{"text": "hi"}])
    done = peri.run("-p", "hello", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert "haiku-writer" not in system_text(peri.model_calls()[-1])
    assert f"plugin peri-skill@{NAME}" in done.stderr  # named in the not-trusted warning
    peri.server.set_script([{"text": "hi"}])
    done = peri.run("-p", "hello", "--output-format", "json", "--trust-workspace")
    assert "haiku-writer" in system_text(peri.model_calls()[-1]), done.stderr


def test_an_update_that_changes_what_runs_asks_again(peri: Peri, market: Path) -> None:
    added(peri, market)
    installed(peri, "peri-time", "peri-skill", "peri-guard")
    rules = market / "plugins" / "peri-guard" / "guardcore" / "rules.py"  # what its hook imports
    rules.write_text(rules.read_text().replace('"rm -rf"', '"rm"'))
    manifest = market / "plugins" / "peri-time" / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace("UTC", "Europe/Paris"))
    skill = market / "plugins" / "peri-skill" / "skills" / "haiku-writer" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nProse only.\n")
    git("commit", "-qam", "change a server and some prose", cwd=market)
    done = plugin(peri, "marketplace", "update", NAME)
    assert done.returncode == 1
    assert "peri-time@peri-test-market: the update changes what runs:" in done.stdout
    assert "changed: .claude-plugin/plugin.json" in done.stdout
    assert "peri-guard@peri-test-market: the update changes what runs:" in done.stdout
    assert "changed: guardcore/rules.py" in done.stdout
    assert "run again with --yes" in done.stderr
    assert "peri-skill@peri-test-market: updated (nothing that runs changed)." in done.stdout
    root = peri.home / ".peri" / "plugins" / NAME
    assert "UTC" in (root / "peri-time" / ".claude-plugin" / "plugin.json").read_text()
    assert (
        "Prose only." in (root / "peri-skill" / "skills" / "haiku-writer" / "SKILL.md").read_text()
    )
    done = plugin(peri, "marketplace", "update", NAME, "--yes")
    assert done.returncode == 0, done.stderr
    assert "Europe/Paris" in (root / "peri-time" / ".claude-plugin" / "plugin.json").read_text()
    assert '"rm"' in (root / "peri-guard" / "guardcore" / "rules.py").read_text()


def test_a_plugins_commands_run_as_name_and_plugin_name(peri: Peri, market: Path) -> None:
    """A plugin's `commands/` is one more source of custom commands: `/name` (after the
    project's and the user's) and `/<plugin>:name`, its `!` lines granted its `allowed-tools`
    and given `${CLAUDE_PLUGIN_ROOT}`."""
    added(peri, market)
    installed(peri, "peri-commands")
    mine = peri.home / ".claude" / "commands" / "review.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("My review of $ARGUMENTS\n")
    peri.server.set_script([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    result = peri.json("-p", "/stamp first")
    assert not result["is_error"] and result["permission_denials"] == [], result
    assert (peri.workspace / "stamped-by-plugin").exists()
    sent = texts(peri.model_calls()[-1])[-1]
    root = peri.home / ".peri" / "plugins" / NAME / "peri-commands"
    assert sent == f"Stamped: PLUGIN-COMMAND-MARKER\nFrom: {root}\nNote: first\n"
    for typed, expected in (
        ("/review 9", "My review of 9\n"),  # the user's own wins the plain name
        ("/peri-commands:review 9", "Plugin review of 9\n"),
    ):
        assert not peri.json("-p", typed)["is_error"], typed
        assert texts(peri.model_calls()[-1])[-1] == expected, typed


def test_a_plugin_commands_own_script_runs_under_its_allowed_tools(
    peri: Peri, market: Path
) -> None:
    """A `!` line that runs the plugin's own script (`"${CLAUDE_PLUGIN_ROOT}/scripts/x.sh"`,
    as Claude Code's ralph-loop does) is covered by an `allowed-tools` rule naming that script
    through the same variable: the rule is filled in as the line is."""
    added(peri, market)
    installed(peri, "peri-commands")
    peri.server.set_script([{"text": "hi"}])
    result = peri.json("-p", "/greet world")
    assert not result["is_error"] and result["permission_denials"] == [], result
    assert texts(peri.model_calls()[-1])[-1] == "Greeting: GREET-MARKER world\n"
