"""Issue 40 item 3: an approval that keeps rules names every rule it keeps, whole; what it keeps
is exactly those rules."""

from __future__ import annotations

from pathlib import Path

from peri_cli.permissions.policy import PermissionPolicy
from peri_cli.permissions.remembering import keeps_label, label_pieces
from tests.permissions.calls import decide_for, suggestions_for


def test_the_label_names_every_rule_of_a_compound_command_and_keeps_exactly_them(
    tmp_path: Path,
) -> None:
    policy = PermissionPolicy(mode="default", workspace=tmp_path)
    rules = suggestions_for(policy, "Bash", {"command": "echo hi; cat notes.txt"})
    assert keeps_label("session", rules) == "Allow for this session (Bash(echo:*), Bash(cat:*))"
    assert keeps_label("project", rules).startswith("Always allow in this project (Bash(echo:*),")
    assert keeps_label("reject", ["Bash(rm:*)"]) == "Always reject in this project (Bash(rm:*))"
    policy.allow_for_session(rules)
    assert decide_for(policy, "Bash", {"command": "cat other.txt"}).action == "allow"
    assert decide_for(policy, "Bash", {"command": "echo there"}).action == "allow"
    assert decide_for(policy, "Bash", {"command": "wc -l notes.txt"}).action == "ask"


def test_a_long_rule_is_whole_and_a_rule_from_the_model_cannot_steer_the_screen() -> None:
    long = "Bash(rm -f " + "x" * 120 + ")"
    assert keeps_label("session", [long]) == f"Allow for this session ({long})"
    shown = keeps_label("session", ["Bash(printf '\x1b[2J'\nrm:*)"])
    assert "\x1b" not in shown and "\n" not in shown and "rm:*" in shown


def test_pieces_break_between_rules_never_inside_one() -> None:
    rules = ["Bash(npm run test:*)", "Bash(git diff:*)", "Edit(./src/**)"]
    pieces = label_pieces("session", rules)
    assert " ".join(pieces) == keeps_label("session", rules)
    assert "(Bash(npm run test:*)," in pieces  # one piece, never split at its spaces
    assert pieces[-1] == "Edit(./src/**))"
    assert label_pieces("session", []) == ["Allow", "for", "this", "session"]
