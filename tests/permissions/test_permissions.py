from pathlib import Path

import pytest

from peri_cli.permissions.asking import decide, protected_path
from peri_cli.permissions.policy import PermissionPolicy
from tests.permissions.calls import decide_for


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.mark.parametrize(
    ("mode", "kind", "expected"),
    [
        ("default", "read", "allow"),
        ("default", "write", "ask"),
        ("default", "execute", "ask"),
        ("default", "external", "ask"),
        ("accept-edits", "write", "allow"),
        ("accept-edits", "execute", "ask"),
        ("accept-edits", "external", "ask"),
        ("plan", "read", "allow"),
        ("plan", "write", "deny"),
        ("plan", "execute", "deny"),
        ("bypass", "write", "allow"),
        ("bypass", "execute", "allow"),
    ],
)
def test_modes(ws: Path, mode, kind, expected) -> None:
    targets = [ws / "a.txt"] if kind == "write" else []
    assert decide(mode, kind, targets, ws).action == expected


def test_write_outside_workspace_asks_even_in_accept_edits(ws: Path, tmp_path: Path) -> None:
    d = decide("accept-edits", "write", [tmp_path / "elsewhere.txt"], ws)
    assert d.action == "ask" and d.outside_workspace


def test_dotdot_and_symlinks_are_resolved(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    assert decide("accept-edits", "write", [ws / "link" / "f.txt"], ws).action == "ask"
    assert decide("accept-edits", "write", [ws / "sub" / ".." / ".." / "x"], ws).action == "ask"
    assert decide("accept-edits", "write", [ws / "sub" / ".." / "x"], ws).action == "allow"


def test_bypass_allows_outside(ws: Path, tmp_path: Path) -> None:
    assert decide("bypass", "write", [tmp_path / "x"], ws).action == "allow"


def test_allow_for_session_covers_the_rule_but_not_outside_writes(ws: Path, tmp_path: Path) -> None:
    policy = PermissionPolicy(mode="default", workspace=ws)
    policy.allow_for_session(["Bash(git diff:*)", "Edit(./src/**)"])
    assert decide_for(policy, "Bash", {"command": "git diff HEAD"}).action == "allow"
    assert decide_for(policy, "Bash", {"command": "git difftool"}).action == "ask"
    assert decide_for(policy, "Bash", {"command": "git diff && rm -rf x"}).action == "ask"
    a = ws / "src" / "a"
    assert decide_for(policy, "Write", {"file_path": str(a)}, [a]).action == "allow"
    b = ws / "b"
    assert decide_for(policy, "Edit", {"file_path": str(b)}, [b]).action == "ask"
    out = tmp_path / "a"
    assert decide_for(policy, "Write", {"file_path": str(out)}, [out]).action == "ask"


def test_a_skills_turn_grant_belongs_to_the_agent_that_loaded_it(ws: Path) -> None:
    """A SubAgent's skill pre-approves its tools for that SubAgent only; the parent's turn
    ending does not take them from it."""
    policy = PermissionPolicy(mode="default", workspace=ws)
    echo = {"command": "echo hi"}
    policy.grant_for_turn(["Bash(echo:*)"], agent="child-1")
    assert decide_for(policy, "Bash", echo, agent="child-1").action == "allow"
    assert decide_for(policy, "Bash", echo).action == "ask"  # the main agent
    assert decide_for(policy, "Bash", echo, agent="child-2").action == "ask"
    policy.end_turn()  # the main agent's turn ends
    assert decide_for(policy, "Bash", echo, agent="child-1").action == "allow"
    policy.end_turn("child-1")
    assert decide_for(policy, "Bash", echo, agent="child-1").action == "ask"


# --- item 5: protected paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "shown"),
    [
        (".peri/settings.json", ".peri/"),
        (".peri/settings.local.json", ".peri/"),
        (".git/hooks/pre-commit", ".git/"),
        (".mcp.json", ".mcp.json"),
        (".claude/skills/x/SKILL.md", ".claude/"),
        (".agents/skills/x/SKILL.md", ".agents/"),
        ("vendor/lib/.git/config", "vendor/lib/.git/"),
        ("sub/.peri/settings.json", "sub/.peri/"),
        (".GIT/config", ".GIT/"),
    ],
)
def test_item5_protected_paths_ask_even_in_accept_edits(ws: Path, rel: str, shown: str) -> None:
    d = decide("accept-edits", "write", [ws / rel], ws)
    assert d.action == "ask" and d.protected
    assert d.reason == f"writes the protected path {shown}"
    assert decide("default", "write", [ws / rel], ws).reason.endswith(shown)
    assert decide("bypass", "write", [ws / rel], ws).action == "allow"
    assert decide("plan", "write", [ws / rel], ws).action == "deny"


@pytest.mark.parametrize("rel", ["src/git.py", ".gitignore", "docs/.github/x.yml", "a.md"])
def test_ordinary_paths_are_not_protected(ws: Path, rel: str) -> None:
    assert protected_path(ws / rel, ws) is None
    assert decide("accept-edits", "write", [ws / rel], ws).action == "allow"


def test_item5_a_symlink_into_a_protected_path_is_protected(ws: Path) -> None:
    (ws / ".peri").mkdir()
    (ws / "innocent.json").symlink_to(ws / ".peri" / "settings.json")
    assert protected_path(ws / "innocent.json", ws) == ".peri/"
    assert decide("accept-edits", "write", [ws / "innocent.json"], ws).action == "ask"


def test_item5_allow_for_the_session_never_covers_a_protected_path(ws: Path) -> None:
    policy = PermissionPolicy(mode="default", workspace=ws)
    policy.allow_for_session(["Edit(./**)"])
    a = ws / "a.py"
    assert decide_for(policy, "Write", {"file_path": str(a)}, [a]).action == "allow"
    settings = ws / ".peri" / "settings.json"
    decision = decide_for(policy, "Write", {"file_path": str(settings)}, [settings])
    assert decision.action == "ask" and decision.protected
