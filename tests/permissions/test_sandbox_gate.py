"""How the sandbox turns a decision (CONTRACT.md §6, §10)."""

from pathlib import Path

import pytest

from peri_cli.base.modes import Mode
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.permissions.rule_sources import RuleSet
from peri_cli.permissions.rule_syntax import RuleSource, parse_rule
from peri_cli.permissions.sandboxing import SandboxGate, excluded_rules
from tests.permissions.calls import decide_for


def policy(tmp_path: Path, mode: Mode = "default", *rules: tuple[str, str], **gate: object):  # type: ignore[no-untyped-def]
    ruleset = RuleSet([parse_rule(t, b, RuleSource("user")) for b, t in rules])  # type: ignore[arg-type]
    sandbox = SandboxGate(active=True, **gate)  # type: ignore[arg-type]
    return PermissionPolicy(mode, tmp_path, ruleset, trusted=True, home=tmp_path, sandbox=sandbox)


def bash(p: PermissionPolicy, command: str, **more: object) -> tuple[str, str]:
    d = decide_for(p, "Bash", {"command": command, **more})
    return d.action, d.reason


@pytest.mark.parametrize("mode", ["default", "accept-edits"])
def test_sandboxed_bash_runs_without_asking(tmp_path: Path, mode: Mode) -> None:
    assert bash(policy(tmp_path, mode), "npm test")[0] == "allow"
    assert bash(policy(tmp_path, mode), "echo x > ../outside")[0] == "allow"  # the sandbox holds


def test_plan_mode_still_refuses(tmp_path: Path) -> None:
    assert bash(policy(tmp_path, "plan"), "npm test")[0] == "deny"


def test_deny_and_ask_rules_win(tmp_path: Path) -> None:
    p = policy(tmp_path, "default", ("deny", "Bash(rm:*)"), ("ask", "Bash(git push:*)"))
    assert bash(p, "rm -rf x")[0] == "deny"
    assert bash(p, "git push origin")[0] == "ask"
    assert bash(p, "ls")[0] == "allow"


def test_a_command_a_deny_rule_may_name_still_asks(tmp_path: Path) -> None:
    p = policy(tmp_path, "default", ("deny", "Bash(curl:*)"))
    assert bash(p, 'x=curl; "$x" evil')[0] != "allow"


def test_auto_allow_off_and_off_when_inactive(tmp_path: Path) -> None:
    assert bash(policy(tmp_path, "default", auto_allow=False), "ls")[0] == "ask"
    off = PermissionPolicy("default", tmp_path, RuleSet(), trusted=True, home=tmp_path)
    assert bash(off, "ls")[0] == "ask"
    assert bash(off, "ls", dangerouslyDisableSandbox=True)[0] == "ask"


def test_excluded_commands_ask_as_usual(tmp_path: Path) -> None:
    p = policy(tmp_path, excluded=tuple(excluded_rules(["docker", "Bash(npm run:*)"])))
    assert bash(p, "docker ps")[0] == "ask"
    assert bash(p, "ls && npm run build")[0] == "ask"
    assert bash(p, "npm test")[0] == "allow"
    assert p.sandbox.sandboxed("Bash", {"command": "npm test"}, p.context())
    assert not p.sandbox.sandboxed("Bash", {"command": "docker ps"}, p.context())


@pytest.mark.parametrize("mode", ["default", "accept-edits", "bypass"])
def test_leaving_the_sandbox_always_asks(tmp_path: Path, mode: Mode) -> None:
    p = policy(tmp_path, mode, ("allow", "Bash(ls:*)"))
    d = decide_for(p, "Bash", {"command": "ls", "dangerouslyDisableSandbox": True})
    assert d.action == "ask" and "OUTSIDE the sandbox" in d.reason and d.protected


def test_leaving_the_sandbox_is_refused_when_not_allowed(tmp_path: Path) -> None:
    p = policy(tmp_path, "bypass", allow_unsandboxed=False)
    action, reason = bash(p, "ls", dangerouslyDisableSandbox=True)
    assert action == "deny" and "allowUnsandboxedCommands" in reason


def test_a_deny_rule_beats_leaving(tmp_path: Path) -> None:
    p = policy(tmp_path, "bypass", ("deny", "Bash(rm:*)"))
    assert bash(p, "rm x", dangerouslyDisableSandbox=True)[0] == "deny"


@pytest.mark.parametrize("mode", ["default", "accept-edits"])
def test_a_protected_write_peri_sees_asks_sandbox_or_not(tmp_path: Path, mode: Mode) -> None:
    """Auto-allow never answers a question Peri asks without the sandbox (issue 37 item 2)."""
    p = policy(tmp_path, mode)
    for command in (
        "echo '{}' > .mcp.json",
        "cat x > sub/.claude/settings.json",
        "echo s >> .agents/skills/x/SKILL.md",
        "echo x > ../outside; echo y > .peri/settings.json",  # outside first, protected too
    ):
        action, reason = bash(p, command)
        assert action == "ask" and "protected path" in reason, (command, reason)
    assert bash(p, "cat .mcp.json > copy.json")[0] == "allow"  # reading one is no write
