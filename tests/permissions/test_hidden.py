"""The hidden paths (`~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.netrc`, `denyRead`): every tool that reads
files asks before handing one over, in every mode, and searches of wider folders leave them out."""

from __future__ import annotations

from pathlib import Path

import pytest

from peri_cli.base.settings_sandbox import SandboxSettings
from peri_cli.permissions.hidden import hidden_paths
from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.permissions.rule_sources import RuleSet
from peri_cli.permissions.rule_syntax import RuleSource, parse_rule
from tests.permissions.calls import call_of, decide_for, suggestions_for


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / ".ssh" / "id_rsa").write_text("KEY")
    return tmp_path / "home"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "vault").mkdir(parents=True)
    (tmp_path / "ws" / "vault" / "token").write_text("T")
    (tmp_path / "ws" / "vault" / "public.txt").write_text("P")
    return tmp_path / "ws"


def policy(ws: Path, home: Path, mode: str = "bypass", **fs: list[str]) -> PermissionPolicy:
    settings = SandboxSettings.model_validate({"filesystem": fs})
    return PermissionPolicy(
        mode=mode,  # type: ignore[arg-type]
        workspace=ws,
        home=home,
        trusted=True,
        hidden=hidden_paths(settings, home=home, workspace=ws),
    )


@pytest.mark.parametrize("mode", ["default", "accept-edits", "plan", "bypass"])
def test_reading_a_default_secret_asks_in_every_mode(ws: Path, home: Path, mode: str) -> None:
    p = policy(ws, home, mode)
    for tool, tool_input in [
        ("Read", {"file_path": str(home / ".ssh" / "id_rsa")}),
        ("Read", {"file_path": "~/.ssh/id_rsa"}),
        ("Grep", {"pattern": "K", "path": str(home / ".ssh")}),
        ("Glob", {"pattern": "*", "path": "~/.ssh"}),
        ("Glob", {"pattern": ".ssh/*", "path": str(home)}),  # its static part is inside
    ]:
        decision = decide_for(p, tool, tool_input)
        assert decision.action == "ask", (tool, tool_input)
        assert decision.protected and "hidden path" in decision.reason
    assert suggestions_for(p, "Read", {"file_path": "~/.ssh/id_rsa"}) == []  # nothing to keep


def test_through_a_link_and_dotdot_too(ws: Path, home: Path) -> None:
    (ws / "keys").symlink_to(home / ".ssh")
    p = policy(ws, home)
    assert decide_for(p, "Read", {"file_path": "keys/id_rsa"}).action == "ask"
    dotted = str(home / "x" / ".." / ".ssh" / "id_rsa")
    assert decide_for(p, "Read", {"file_path": dotted}).action == "ask"


def test_deny_read_asks_allow_read_brings_back_and_a_deny_rule_still_denies(
    ws: Path, home: Path
) -> None:
    p = policy(ws, home, denyRead=["./vault"], allowRead=["./vault/public.txt"])
    assert decide_for(p, "Read", {"file_path": "vault/token"}).action == "ask"
    assert decide_for(p, "Read", {"file_path": "vault/public.txt"}).action == "allow"
    assert decide_for(p, "Read", {"file_path": "README.md"}).action == "allow"
    p.rules = RuleSet([parse_rule("Read(./vault/**)", "deny", RuleSource("user"))])
    assert decide_for(p, "Read", {"file_path": "vault/token"}).action == "deny"


def test_a_wider_search_leaves_them_out_and_an_approved_one_hands_over_only_its_own(
    ws: Path, home: Path
) -> None:
    p = policy(ws, home, denyRead=["./vault"])
    assert decide_for(p, "Grep", {"pattern": "T"}).action == "allow"  # the workspace
    assert p.read_denied(ws / "vault" / "token") and p.read_denied(home / ".ssh" / "id_rsa")
    assert not p.read_denied(ws / "README.md")
    approved = p.read_filter(call_of("Grep", {"pattern": "T", "path": "vault"}, ws))
    assert not approved(ws / "vault" / "token")  # what the user let it search
    assert approved(home / ".ssh" / "id_rsa")  # and nothing else hidden


def test_tools_that_read_no_files_are_not_asked(ws: Path, home: Path) -> None:
    p = policy(ws, home)
    assert decide_for(p, "Bash", {"command": "echo ~/.ssh/id_rsa"}).action == "allow"
    assert decide_for(p, "mcp__fs__read", {"path": str(home / ".ssh")}).action == "allow"
