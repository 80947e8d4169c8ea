"""Permission rules: parsing, sources, matching (compound commands, redirections, globs, `..`,
symlinks) and the decision with the mode behind them."""

import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from peri_cli.base.modes import Mode
from peri_cli.base.settings import SettingsLayer
from peri_cli.permissions.call_facts import RuleContext
from peri_cli.permissions.rule_sources import (
    RuleSet,
    allow_rule_loosenings,
    rules_from_cli,
    rules_from_settings,
    ruleset_from_layers,
)
from peri_cli.permissions.rule_suggest import suggest_rules
from peri_cli.permissions.rule_syntax import (
    Behavior,
    Rule,
    RuleError,
    RuleSource,
    parse_rule,
    split_cli_rules,
)
from peri_cli.permissions.rulefile import RuleFileError, add_rules, local_settings_path
from peri_cli.permissions.rules import CallDecision, decide, evaluate, read_denied
from peri_cli.permissions.shell_syntax import MAX_COMMAND_CHARS, ShellParseError, parse
from peri_cli.permissions.trust import WorkspaceFiles
from tests.permissions.calls import call_of

USER = RuleSource("user", "/home/u/.peri/settings.json")
PROJECT = RuleSource("project", "/ws/.peri/settings.json")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("k")
    return root


def rules(*specs: str, behavior: Behavior = "allow", source: RuleSource = USER) -> list[Rule]:
    return [parse_rule(s, behavior, source) for s in specs]


def judge(
    ws: Path,
    ruleset: list[Rule],
    tool: str,
    tool_input: dict[str, Any],
    mode: Mode = "default",
    *,
    trusted: bool = True,
    hook: Any = None,
) -> CallDecision:
    call = call_of(tool, tool_input, ws)
    return decide(
        call, ruleset, RuleContext(ws, trusted=trusted, home=ws.parent / "home"), mode, hook=hook
    )


def bash(ws: Path, ruleset: list[Rule], command: str, mode: Mode = "default") -> str:
    return judge(ws, ruleset, "Bash", {"command": command}, mode).action


# --- parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "spec"),
    [
        ("Bash", "Bash", None),
        ("Bash(git diff:*)", "Bash", "git diff:*"),
        ("  Bash( npm run test )  ", "Bash", "npm run test"),
        ("Edit(src/**)", "Edit", "src/**"),
        ("Read(./secrets/**)", "Read", "./secrets/**"),
        ("mcp__github__create_issue", "mcp__github__create_issue", None),
        ("mcp__github", "mcp__github", None),
        ("mcp__github__*", "mcp__github", None),
        ("Agent(Explore*)", "Agent", "Explore*"),
    ],
)
def test_rules_parse(text: str, tool: str, spec: str | None) -> None:
    rule = parse_rule(text, "allow", USER)
    assert (rule.tool, rule.specifier, rule.source) == (tool, spec, USER)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Bash(",
        "Bash()",
        "Bash)x",
        "Ba sh",
        "Bash(git diff:* --stat)",
        "Bash(echo $(id))",
        "Bash(a; b)",
        "Bash(echo 'open)",
        "Glob(src/**)",
        "WebFetch(x.com)",  # WebFetch takes domain:HOST (issue 15)
        "mcp__s__*(x)",
    ],
)
def test_malformed_rules_say_why(text: str) -> None:
    with pytest.raises(RuleError) as e:
        parse_rule(text, "allow", USER)
    assert str(e.value) and "\n" not in str(e.value)


def test_settings_problems_are_reported_not_fatal() -> None:
    value = {
        "allow": ["Bash(git diff:*)", "Bash(", 3, "Edit(src/**)"],
        "deny": "Bash(rm:*)",
        "defaultMode": "bypass",
    }
    found, problems = rules_from_settings(value, USER)
    assert [r.text for r in found] == ["Bash(git diff:*)", "Edit(src/**)"]
    assert len(problems) == 4
    assert all(USER.path in p for p in problems)
    assert any("permissions.allow[1]" in p for p in problems)
    assert any("permissions.deny" in p and "list" in p for p in problems)
    assert rules_from_settings(["Bash"], USER)[0] == []
    assert rules_from_settings(None, USER) == ([], [])


def test_rule_text_with_control_characters_is_reported_visibly() -> None:
    _, problems = rules_from_settings({"allow": ["Bash(\x1b]52;c;x\x07"]}, USER)
    assert problems and "\x1b" not in problems[0]


def test_cli_rules_split_on_commas_and_spaces_outside_parentheses() -> None:
    assert split_cli_rules("Bash(git diff:*),Edit Read") == ["Bash(git diff:*)", "Edit", "Read"]
    assert split_cli_rules("Bash(echo a, b) ,  mcp__x") == ["Bash(echo a, b)", "mcp__x"]
    found, problems = rules_from_cli(["Bash(git log:*) Bash(", "Edit"], "allow", "--allowedTools")
    assert [r.text for r in found] == ["Bash(git log:*)", "Edit"]
    assert problems == ["--allowedTools: 'Bash(': a rule with '(' must end with ')'"]
    assert all(r.source == RuleSource("cli", "--allowedTools") for r in found)


def test_rules_from_every_settings_file_keep_their_source(ws: Path, tmp_path: Path) -> None:
    user = tmp_path / "home" / "settings.json"
    project = ws / ".peri" / "settings.json"
    local = ws / ".peri" / "settings.local.json"
    layers = (
        SettingsLayer("user", user, {"permissions": {"allow": ["Bash(ls:*)"]}}),
        SettingsLayer(
            "project", project, {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Edit"]}}
        ),
        SettingsLayer(
            "local", local, {"model": "m", "permissions": {"allow": ["Bash(make:*)", "x("]}}
        ),
    )
    ruleset = ruleset_from_layers(layers)
    assert [(r.behavior, r.text, r.source.scope, r.source.path) for r in ruleset.rules] == [
        ("allow", "Bash(ls:*)", "user", str(user)),
        ("deny", "Bash(rm:*)", "project", str(project)),
        ("allow", "Edit", "project", str(project)),
        ("allow", "Bash(make:*)", "local", str(local)),
    ]
    assert len(ruleset.problems) == 1 and str(local) in ruleset.problems[0]
    assert [r.text for r in ruleset.active(trusted=False)] == ["Bash(ls:*)", "Bash(rm:*)"]
    # What trust would enable, for the trust dialog and the warning line.
    found = allow_rule_loosenings(WorkspaceFiles(ws, layers))
    assert [(x.kind, x.what, x.source) for x in found] == [
        ("allow_rule", "allow rules Edit", ".peri/settings.json"),
        ("allow_rule", "allow rules Bash(make:*)", ".peri/settings.local.json"),
    ]


# --- Bash: prefixes, exact commands, wildcards ------------------------------------------------


def test_prefix_matches_at_a_word_boundary(ws: Path) -> None:
    allow = rules("Bash(git diff:*)")
    assert bash(ws, allow, "git diff") == "allow"
    assert bash(ws, allow, "git diff HEAD~1 -- src") == "allow"
    assert bash(ws, allow, "git  'diff'  HEAD") == "allow"  # quotes and spacing do not matter
    assert bash(ws, allow, "git difftool") == "ask"
    assert bash(ws, allow, "git log") == "ask"
    assert bash(ws, allow, "/usr/bin/git diff") == "ask"


def test_exact_rule_matches_only_that_command(ws: Path) -> None:
    allow = rules("Bash(npm run test)")
    assert bash(ws, allow, "npm run test") == "allow"
    assert bash(ws, allow, "npm run test2") == "ask"
    assert bash(ws, allow, "npm run test --watch") == "ask"


def test_wildcard_rules(ws: Path) -> None:
    allow = rules("Bash(npm run *)", "Bash(ls *)")
    assert bash(ws, allow, "npm run build") == "allow"
    assert bash(ws, allow, "npm install") == "ask"
    assert bash(ws, allow, "ls") == "allow"
    assert bash(ws, allow, "ls -la src") == "allow"
    assert bash(ws, allow, "lsof") == "ask"
    leading = rules("Bash(* --version)")
    assert bash(ws, leading, "node --version") == "allow"
    assert bash(ws, leading, "$TOOL --version") == "ask"  # the command itself must be known


@pytest.mark.parametrize(
    "command",
    [
        "git diff && rm -rf x",
        "git diff; rm -rf x",
        "git diff || rm -rf x",
        "git diff | sh",
        "git diff\nrm -rf x",
        "git diff & rm -rf x",
        "(rm -rf x)",
        "git diff $(rm -rf x)",
        'git diff "$(rm -rf x)"',
        "git diff `rm -rf x`",
        "git diff <(rm -rf x)",
        "git diff > >(rm -rf x)",
        "if git diff; then rm -rf x; fi",
        "for f in $(rm -rf x); do git diff $f; done",
        "{ git diff; rm -rf x; }",
    ],
)
def test_compound_commands_are_judged_part_by_part(ws: Path, command: str) -> None:
    assert bash(ws, rules("Bash(git diff:*)"), command) == "ask"
    assert bash(ws, rules("Bash(git diff:*)", "Bash(rm -rf x)", "Bash(sh)"), command) == "allow"


def test_every_part_allowed_by_some_rule_allows_the_pipeline(ws: Path) -> None:
    allow = rules("Bash(git log:*)", "Bash(wc:*)", "Bash(head:*)")
    assert bash(ws, allow, "git log --oneline | head -5 | wc -l") == "allow"
    assert bash(ws, allow, "git log | head -5 | xargs rm") == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "GIT_EXTERNAL_DIFF=./evil git diff",  # an assignment can change what runs
        "PATH=.:$PATH; git diff",
        "$GIT diff",  # the command name is known only at run time
        "g?t diff",
        "{git,diff}",
        "gi$T diff",
    ],
)
def test_allow_rules_need_an_exact_command(ws: Path, command: str) -> None:
    assert bash(ws, rules("Bash(git diff:*)", "Bash(echo:*)"), command) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "echo 'not closed",
        'echo "not closed',
        "echo $(not closed",
        "if true; then rm -rf /",  # a missing `fi`
        "cat <<EOF\nnot closed",
        "coproc x (rm -rf /)",  # the grammar reads no named coprocess of a subshell
        "echo $((1 + $(rm -rf /)))",
        "arr=(a b); echo ${arr[$(rm -rf /)]}",
        "too long",
        "too many parts",
        "brackets",
    ],
)
def test_a_command_that_cannot_be_read_asks(ws: Path, command: str) -> None:
    generated = {
        "too long": "echo " + "x" * MAX_COMMAND_CHARS,
        "too many parts": "ls;" * 600,
        "brackets": "echo " + "[" * (MAX_COMMAND_CHARS - 10) + "'",  # no quadratic scan
    }
    command = generated.get(command, command)
    allow = rules("Bash")  # even where every command is allowed
    decision = judge(ws, allow, "Bash", {"command": command})
    assert decision.action == "ask"
    assert "could not be checked" in decision.reason
    assert bash(ws, allow, command, "plan") == "deny"
    assert bash(ws, allow, command, "bypass") == "allow"


@pytest.mark.parametrize(
    "command",
    ["case x in a) rm -rf /;; esac", "f() { rm -rf /; }; f", "cat <<EOF\n$(rm -rf /)\nEOF"],
)
def test_case_functions_and_here_documents_are_read_part_by_part(ws: Path, command: str) -> None:
    """The hand-written reader gave up on these (and asked); bash's grammar reads them, so the
    commands inside are judged as any other part."""
    assert bash(ws, rules("Bash(cat:*)", "Bash(f)"), command) == "ask"
    assert bash(ws, rules("Bash(cat:*)", "Bash(f)", "Bash(rm -rf /)"), command) == "allow"
    assert bash(ws, rules("Bash(rm:*)", behavior="deny"), command, "bypass") == "deny"


def test_deny_rules_see_through_wrappers_and_nested_shells(ws: Path) -> None:
    deny = rules("Bash(rm:*)", behavior="deny")
    for command in [
        "rm -rf x",
        "FOO=1 rm x",
        "sudo -u root rm x",
        "env -i A=1 rm x",
        "timeout 5 rm x",
        "find . | xargs -n 1 rm",
        "bash -c 'rm -rf x'",
        'sh -ec "ls; rm x"',
        "eval rm x",
        "echo ok && nohup nice -n 5 rm x",
    ]:
        assert bash(ws, deny, command, "bypass") == "deny", command
    assert bash(ws, deny, "echo rm", "bypass") == "allow"
    assert bash(ws, deny, "rmdir x", "bypass") == "allow"
    # A command it cannot read is still denied when the rule's command is in it.
    assert bash(ws, deny, "rm -rf 'x", "bypass") == "deny"


# --- redirections are writes -------------------------------------------------------------------


def test_a_redirection_into_a_protected_path_asks_whatever_the_rules(ws: Path) -> None:
    everything = rules("Bash", "Edit", "Bash(echo:*)")
    for command in [
        "echo '{}' > .peri/settings.json",
        "echo x >> .git/hooks/pre-commit",
        "git diff &> .mcp.json",
        "{ echo a; } > .claude/settings.json",
        "echo x > src/../.peri/settings.json",
        "cat <> .agents/x",
        "echo x >&.peri/settings.json",
    ]:
        decision = judge(ws, everything, "Bash", {"command": command}, "accept-edits")
        assert (decision.action, decision.protected) == ("ask", True), command
    assert bash(ws, everything, "echo x > .peri/settings.json", "bypass") == "allow"


def test_a_redirection_is_checked_like_an_edit(ws: Path) -> None:
    echo = rules("Bash(echo:*)")
    assert bash(ws, echo, "echo hi > out.txt") == "ask"  # default mode asks for edits
    assert bash(ws, echo, "echo hi > out.txt", "accept-edits") == "allow"
    assert bash(ws, [*echo, *rules("Edit(./out.txt)")], "echo hi > out.txt") == "allow"
    assert bash(ws, echo, "echo hi > /dev/null 2>&1") == "allow"
    assert bash(ws, echo, "echo hi 2>&1 >&2") == "allow"
    deny_edit = rules("Edit(src/**)", behavior="deny")
    assert bash(ws, [*echo, *deny_edit], "echo hi > src/a.py", "bypass") == "deny"
    assert bash(ws, [*echo, *rules("Edit", behavior="deny")], "echo hi > x", "bypass") == "deny"


def test_redirections_whose_target_is_unknown_or_outside_ask(ws: Path) -> None:
    everything = rules("Bash", "Edit")
    for command in ["echo x > $OUT", "echo x > `ls`", "cd src && echo x > a.txt", "echo x > *.txt"]:
        assert bash(ws, everything, command, "accept-edits") == "ask", command
    outside = judge(ws, everything, "Bash", {"command": "echo x >> ~/.bashrc"}, "accept-edits")
    assert (outside.action, outside.outside_workspace) == ("ask", True)
    assert bash(ws, everything, "echo x > /tmp/elsewhere", "accept-edits") == "ask"


def test_a_read_redirection_is_a_read(ws: Path) -> None:
    deny = rules("Read(./secrets/**)", behavior="deny")
    assert bash(ws, [*rules("Bash"), *deny], "wc -l < secrets/key", "bypass") == "deny"


# --- paths: globs, `..`, symlinks --------------------------------------------------------------


def edit(ws: Path, ruleset: list[Rule], path: str, mode: Mode = "default") -> CallDecision:
    return judge(ws, ruleset, "Edit", {"file_path": path}, mode)


def test_path_globs_are_relative_to_the_workspace(ws: Path) -> None:
    allow = rules("Edit(src/**)")
    assert edit(ws, allow, "src/a.py").action == "allow"
    assert edit(ws, allow, "src/deep/er/a.py").action == "allow"
    assert edit(ws, allow, str(ws / "src" / "a.py")).action == "allow"
    assert edit(ws, allow, "srcx/a.py").action == "ask"
    assert edit(ws, allow, "lib/src/a.py").action == "ask"
    assert edit(ws, rules("Write(*.md)"), "docs/deep/README.md").action == "allow"  # any depth
    assert edit(ws, rules("Edit(./*.md)"), "docs/README.md").action == "ask"  # anchored
    assert edit(ws, rules("Edit(/docs/*.md)"), "docs/README.md").action == "allow"
    assert edit(ws, rules("Edit(src/*.py)"), "src/a/b.py").action == "ask"  # * stays in a folder


def test_dotdot_is_folded_before_matching(ws: Path) -> None:
    allow = rules("Edit(src/**)")
    assert edit(ws, allow, "src/../lib/a.py").action == "ask"
    assert edit(ws, allow, "lib/../src/a.py").action == "allow"
    deny = rules("Read(./secrets/**)", behavior="deny")
    for path in ["secrets/key", "./secrets/../secrets/key", "src/../secrets/key"]:
        assert judge(ws, deny, "Read", {"file_path": path}, "bypass").action == "deny", path


def test_a_path_outside_the_workspace_never_matches_a_workspace_allow(ws: Path) -> None:
    twin = ws.parent / "twin"
    (twin / "src").mkdir(parents=True)
    decision = edit(ws, rules("Edit(src/**)", "Edit(**)"), str(twin / "src" / "a.py"))
    assert (decision.action, decision.outside_workspace) == ("ask", True)
    decision = edit(ws, rules("Edit(src/**)"), "src/../../twin/src/a.py", "accept-edits")
    assert (decision.action, decision.outside_workspace) == ("ask", True)


def test_symlinks_are_resolved_before_matching(ws: Path) -> None:
    outside = ws.parent / "outside"
    outside.mkdir()
    (ws / "src" / "out").symlink_to(outside)
    (ws / "src" / "cfg").symlink_to(ws / ".peri", target_is_directory=True)
    (ws / "public").symlink_to(ws / "secrets")
    allow = rules("Edit(src/**)")
    decision = edit(ws, allow, "src/out/a.py")
    assert (decision.action, decision.outside_workspace) == ("ask", True)
    decision = edit(ws, allow, "src/cfg/settings.json")
    assert (decision.action, decision.protected) == ("ask", True)
    (ws / "lib").mkdir()
    (ws / "src" / "lib").symlink_to(ws / "lib")
    assert edit(ws, allow, "src/lib/a.py").action == "ask"  # an allow judges where it lands
    assert edit(ws, rules("Edit(lib/**)"), "src/lib/a.py").action == "allow"
    # A deny holds whether the path names the link or the place it leads.
    deny = rules("Read(./secrets/**)", behavior="deny")
    assert judge(ws, deny, "Read", {"file_path": "public/key"}, "bypass").action == "deny"
    deny_link = rules("Read(./public/**)", behavior="deny")
    assert judge(ws, deny_link, "Read", {"file_path": "public/key"}, "bypass").action == "deny"


def test_a_workspace_reached_through_a_symlink(ws: Path) -> None:
    alias = ws.parent / "alias"
    alias.symlink_to(ws)
    call = call_of("Edit", {"file_path": "src/a.py"}, alias)
    ctx = RuleContext(alias, trusted=True)
    assert decide(call, rules("Edit(src/**)"), ctx, "default").action == "allow"
    read = call_of("Read", {"file_path": str(alias / "secrets/key")}, alias)
    assert decide(read, rules("Read(secrets/**)", behavior="deny"), ctx, "bypass").action == "deny"


def test_deny_ignores_case_allow_does_not(ws: Path) -> None:
    deny = rules("Read(.env)", behavior="deny")
    assert judge(ws, deny, "Read", {"file_path": "sub/.ENV"}, "bypass").action == "deny"
    assert edit(ws, rules("Edit(SRC/**)"), "src/a.py").action == "ask"


def test_home_and_absolute_patterns(ws: Path) -> None:
    home = ws.parent / "home"
    (home / ".ssh").mkdir(parents=True)
    deny = rules("Read(~/.ssh/**)", f"Read(/{ws.parent}/outside/*)", behavior="deny")
    assert judge(ws, deny, "Read", {"file_path": str(home / ".ssh/id_rsa")}).action == "deny"
    target = str(ws.parent / "outside" / "x")
    assert judge(ws, deny, "Read", {"file_path": target}).action == "deny"


def test_bad_paths_ask_instead_of_raising(ws: Path) -> None:
    (ws / "loop").symlink_to(ws / "loop")
    for path in ["src/a\x00b", "loop/x"]:
        assert edit(ws, rules("Edit(src/**)"), path, "accept-edits").action in ("ask", "allow")


# --- Read covers Grep, Glob, `@` ----------------------------------------------------------------


def test_a_read_deny_covers_grep_glob_and_attachments(ws: Path) -> None:
    deny = rules("Read(./secrets/**)", behavior="deny")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("Read", {"file_path": "secrets/key"}),
        ("Grep", {"pattern": "k", "path": "secrets"}),
        ("Grep", {"pattern": "k", "path": str(ws / "secrets" / "key")}),
        ("Grep", {"pattern": "k", "glob": "secrets/**"}),
        ("Glob", {"pattern": "secrets/*"}),
        ("Glob", {"pattern": "*", "path": "secrets"}),
    ]
    for tool, tool_input in cases:
        assert judge(ws, deny, tool, tool_input, "bypass").action == "deny", (tool, tool_input)
    assert judge(ws, deny, "Grep", {"pattern": "k", "path": "src"}).action == "allow"
    # Searching the whole workspace is allowed; the tool leaves denied files out of its results.
    ctx = RuleContext(ws, trusted=True)
    assert read_denied(ws / "secrets" / "key", deny, ctx) is not None
    assert read_denied(ws / "src" / "a.py", deny, ctx) is None
    bare = rules("Read", behavior="deny")
    assert judge(ws, bare, "Glob", {"pattern": "**"}).action == "deny"


# --- names, MCP, the order, trust, modes, hooks ------------------------------------------------


def test_mcp_rules_by_server_and_tool(ws: Path) -> None:
    def run(ruleset: list[Rule], tool: str) -> str:
        return judge(ws, ruleset, tool, {}).action

    assert run(rules("mcp__gh"), "mcp__gh__create_issue") == "allow"
    assert run(rules("mcp__gh"), "mcp__ghx__create_issue") == "ask"
    assert run(rules("mcp__gh__create_issue"), "mcp__gh__create_issue") == "allow"
    assert run(rules("mcp__gh__create_issue"), "mcp__gh__delete_repo") == "ask"
    assert run(rules("mcp__gh__*"), "mcp__gh__delete_repo") == "allow"
    assert run(rules("mcp__*"), "mcp__db__query") == "allow"
    assert run(rules("mcp__gh", behavior="deny"), "mcp__gh__x") == "deny"


def test_deny_then_ask_then_allow(ws: Path) -> None:
    mixed = [
        *rules("Bash(git:*)"),
        *rules("Bash(git push:*)", behavior="ask"),
        *rules("Bash(git push --force:*)", behavior="deny"),
    ]
    assert bash(ws, mixed, "git status") == "allow"
    assert bash(ws, mixed, "git push origin") == "ask"
    assert bash(ws, mixed, "git push --force origin") == "deny"
    assert bash(ws, mixed, "git push --force", "bypass") == "deny"
    assert bash(ws, mixed, "git push origin", "bypass") == "allow"
    decision = judge(ws, mixed, "Bash", {"command": "git push --force"})
    assert decision.rule is not None and decision.rule.text == "Bash(git push --force:*)"
    assert USER.path in decision.reason


def test_no_rule_leaves_the_decision_to_the_mode(ws: Path) -> None:
    assert bash(ws, [], "ls") == "ask"
    assert bash(ws, [], "ls", "plan") == "deny"
    assert edit(ws, [], "src/a.py", "accept-edits").action == "allow"
    assert edit(ws, [], "src/a.py").action == "ask"
    assert judge(ws, [], "Read", {"file_path": "src/a.py"}).action == "allow"
    call = call_of("Bash", {"command": "ls"}, ws)
    assert evaluate(call, [], RuleContext(ws, trusted=True)).action == "none"


def test_plan_mode_is_not_loosened_by_allow_rules(ws: Path) -> None:
    assert bash(ws, rules("Bash"), "ls", "plan") == "deny"
    assert (
        judge(ws, rules("Read", behavior="ask"), "Read", {"file_path": "a"}, "plan").action == "ask"
    )


def test_project_allow_rules_wait_for_trust(ws: Path) -> None:
    project = [
        *rules("Bash(make:*)", source=PROJECT),
        *rules("Bash(make clean:*)", behavior="deny", source=PROJECT),
        *rules("Bash(make test:*)", behavior="ask", source=PROJECT),
    ]
    call = {"command": "make build"}
    assert judge(ws, project, "Bash", call, trusted=False).action == "ask"
    assert judge(ws, project, "Bash", call, trusted=True).action == "allow"
    assert (
        judge(ws, project, "Bash", {"command": "make clean"}, "bypass", trusted=False).action
        == "deny"
    )
    assert judge(ws, project, "Bash", {"command": "make test"}, trusted=False).action == "ask"
    local = rules("Bash(make:*)", source=RuleSource("local", "/ws/.peri/settings.local.json"))
    assert judge(ws, local, "Bash", call, trusted=False).action == "ask"
    ruleset = RuleSet(project + local)
    assert [r.text for r in ruleset.withheld(trusted=False)] == ["Bash(make:*)", "Bash(make:*)"]
    assert ruleset.withheld(trusted=True) == []


def test_a_hook_decision_takes_its_place(ws: Path) -> None:
    assert judge(ws, [], "Bash", {"command": "ls"}, hook="allow").action == "allow"
    assert judge(ws, [], "Bash", {"command": "ls"}, "bypass", hook="deny").action == "deny"
    assert judge(ws, rules("Bash"), "Bash", {"command": "ls"}, hook="ask").action == "ask"
    denied = rules("Bash(ls:*)", behavior="deny")
    assert judge(ws, denied, "Bash", {"command": "ls"}, hook="allow").action == "deny"
    protected = judge(ws, [], "Bash", {"command": "echo > .peri/x"}, hook="allow")
    assert (protected.action, protected.protected) == ("ask", True)


def test_subject_rules_for_agents_and_skills(ws: Path) -> None:
    # (Agent and Skill calls change nothing themselves: the mode allows them, a rule can deny.)
    deny = rules("Agent(Explore*)", "Skill(deploy)", behavior="deny")
    assert judge(ws, deny, "Agent", {"subagent_type": "Explorer"}).action == "deny"
    assert judge(ws, deny, "Agent", {"subagent_type": "general"}).action == "allow"
    assert judge(ws, deny, "Skill", {"name": "deploy"}).action == "deny"
    assert judge(ws, deny, "Skill", {"name": "deployer"}).action == "allow"


# --- suggested rules and the local settings file ---------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("Bash", {"command": "git diff HEAD~1"}, ["Bash(git diff:*)"]),
        ("Bash", {"command": "npm run test -- --watch"}, ["Bash(npm run test:*)"]),
        ("Bash", {"command": "pytest -q tests"}, ["Bash(pytest:*)"]),
        ("Bash", {"command": "git log | head -3"}, ["Bash(git log:*)", "Bash(head:*)"]),
        ("Bash", {"command": "rm -rf build"}, ["Bash(rm -rf build)"]),
        ("Bash", {"command": "python -c 'print(1)'"}, ["Bash(python -c 'print(1)')"]),
        ("Bash", {"command": "echo hi > notes.txt"}, ["Bash(echo:*)", "Edit(./notes.txt)"]),
        ("Bash", {"command": "$CMD x"}, []),
        ("Bash", {"command": "echo 'open"}, []),
        ("Bash", {"command": "echo > .peri/settings.json"}, []),
        ("Edit", {"file_path": "src/pkg/a.py"}, ["Edit(./src/pkg/**)"]),
        ("Write", {"file_path": "top.py"}, ["Edit(./top.py)"]),  # not the whole workspace
        ("Edit", {"file_path": ".git/config"}, []),
        ("Edit", {"file_path": "/etc/passwd"}, []),
        ("mcp__gh__create", {}, ["mcp__gh__create"]),
    ],
)
def test_suggested_rules(
    ws: Path, tool: str, tool_input: dict[str, Any], expected: list[str]
) -> None:
    call = call_of(tool, tool_input, ws)
    ctx = RuleContext(ws, trusted=True)
    suggested = suggest_rules(call, ctx)
    assert suggested == expected
    if suggested:  # each suggestion parses back and allows the call it came from
        back = [parse_rule(s, "allow", RuleSource("session")) for s in suggested]
        assert decide(call, back, ctx, "default").action == "allow"


def test_add_rules_creates_the_local_file_and_ignores_it(ws: Path) -> None:
    path = add_rules(ws, ["Bash(git diff:*)"])
    assert path == local_settings_path(ws)
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(git diff:*)"]}}
    assert (ws / ".peri" / ".gitignore").read_text() == "settings.local.json\n"
    add_rules(ws, ["Bash(git diff:*)", "Edit(./src/**)"])
    found, problems = rules_from_settings(json.loads(path.read_text())["permissions"], USER)
    assert [r.text for r in found] == ["Bash(git diff:*)", "Edit(./src/**)"] and problems == []
    assert (ws / ".peri" / ".gitignore").read_text() == "settings.local.json\n"


def test_add_rules_keeps_other_keys(ws: Path) -> None:
    path = local_settings_path(ws)
    path.parent.mkdir()
    path.write_text('{"model": "m", "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Read"]}}')
    (ws / ".peri" / ".gitignore").write_text("other")
    add_rules(ws, ["Bash(ls:*)"])
    assert json.loads(path.read_text()) == {
        "model": "m",
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Read", "Bash(ls:*)"]},
    }
    assert (ws / ".peri" / ".gitignore").read_text() == "other\nsettings.local.json\n"


@pytest.mark.parametrize(
    "content", ['{"permissions": ', "[1]", '{"permissions": []}', '{"permissions": {"allow": 3}}']
)
def test_add_rules_never_overwrites_what_it_cannot_read(ws: Path, content: str) -> None:
    path = local_settings_path(ws)
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(RuleFileError):
        add_rules(ws, ["Bash(ls:*)"])
    assert path.read_text() == content


def test_add_rules_refuses_links_and_bad_rules(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(RuleFileError):
        add_rules(ws, ["Bash("])
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws / ".peri").symlink_to(outside)
    with pytest.raises(RuleFileError):
        add_rules(ws, ["Bash(ls:*)"])
    assert list(outside.iterdir()) == []
    (ws / ".peri").unlink()
    (ws / ".peri").mkdir()
    target = outside / "real.json"
    target.write_text("{}")
    local_settings_path(ws).symlink_to(target)
    with pytest.raises(RuleFileError):
        add_rules(ws, ["Bash(ls:*)"])
    assert target.read_text() == "{}"


def test_rules_added_at_once_all_land(ws: Path) -> None:
    texts = [f"Bash(tool{n}:*)" for n in range(16)]
    threads = [threading.Thread(target=add_rules, args=(ws, [t])) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data = json.loads(local_settings_path(ws).read_text())
    assert sorted(data["permissions"]["allow"]) == sorted(texts)
    leftovers = [p for p in os.listdir(ws / ".peri") if p.endswith(".tmp")]
    assert leftovers == []


# --- the shell reader itself ------------------------------------------------------------------


def test_shell_reader_parts_and_redirections() -> None:
    script = parse(
        "cd sub && make 2>&1 | tee log # > not-a-file\n"
        "cat <<'EOF' > out\n$(not run)\nEOF\n"
        'echo "$(id -u)" `whoami` ${HOME}/x'
    )
    assert [c.text for c in script.commands] == [
        "cd sub",
        "make",
        "tee log",
        "cat",
        "id -u",
        "whoami",
        "echo $(id -u) `whoami` ${HOME}/x",
    ]
    assert [(r.op, r.target.value) for r in script.redirections] == [(">", "out")]
    assert script.changes_directory
    with pytest.raises(ShellParseError):
        parse("echo $(echo $(echo $(echo " + "$(" * 20 + "x" + ")" * 24)


def test_a_folder_name_with_a_bracket_is_escaped_without_a_regex_warning(ws: Path) -> None:
    """`[` is escaped as `[[]`; inside the rule's character class it must be `\\[`, or `re`
    warns "Possible nested set" (a FutureWarning: its meaning may change)."""
    (ws / "a[1]").mkdir()
    call = call_of("Edit", {"file_path": "a[1]/x.py"}, ws)
    ctx = RuleContext(ws, trusted=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        suggested = suggest_rules(call, ctx)
        assert suggested == ["Edit(./a[[]1]/**)"]
        granted = [parse_rule(s, "allow", RuleSource("session")) for s in suggested]
        assert decide(call, granted, ctx, "default").action == "allow"
        other = call_of("Edit", {"file_path": "a1/x.py"}, ws)
        assert decide(other, granted, ctx, "default").action == "ask"


def suggest_and_grant(ws: Path, command: str) -> tuple[list[str], list[Rule]]:
    """The rules offered for `command`, and those rules as the session would hold them."""
    call = call_of("Bash", {"command": command}, ws)
    suggested = suggest_rules(call, RuleContext(ws, trusted=True, home=ws.parent / "home"))
    return suggested, [parse_rule(s, "allow", RuleSource("session")) for s in suggested]


@pytest.mark.parametrize(
    ("command", "expected", "follow_up"),
    [
        ("cp a.txt b.txt", "Bash(cp a.txt b.txt)", "cp evil.sh src/conftest.py"),
        ("mv a.txt b.txt", "Bash(mv a.txt b.txt)", "mv x Makefile"),
        ("tee -a log.txt", "Bash(tee -a log.txt)", "tee -a src/a.py"),
        ("ln -s a b", "Bash(ln -s a b)", "ln -sf /bin/sh src/x"),
        ("chmod +x run.sh", "Bash(chmod +x run.sh)", "chmod 777 src"),
        ("touch a", "Bash(touch a)", "touch src/b"),
        ("tar xf a.tar", "Bash(tar xf a.tar)", "tar xf evil.tar"),
        ("mkdir -p out", "Bash(mkdir -p out)", "mkdir -p src/x"),
    ],
)
def test_a_command_that_changes_files_is_offered_only_itself(
    ws: Path, command: str, expected: str, follow_up: str
) -> None:
    """The files such a command writes are named by its arguments, which a prefix rule would
    leave open: only the command as shown is offered."""
    suggested, granted = suggest_and_grant(ws, command)
    assert suggested == [expected]
    assert bash(ws, granted, command) == "allow"
    assert bash(ws, granted, follow_up) == "ask"


def test_a_prefix_rule_never_covers_an_argument_naming_a_protected_or_outside_path(
    ws: Path,
) -> None:
    """`Bash(cp:*)` written by the user reads as "copy files here", not "install a git hook" or
    "change ~/.bashrc": such a command asks, and no rule is offered for it. Ordinary arguments
    stay covered, and a rule naming the whole command was read whole: it still allows it."""
    (ws / "src" / "out").symlink_to(ws.parent)
    prefixes = rules("Bash(cp:*)", "Bash(mv:*)", "Bash(tee:*)", "Bash(cat:*)", "Bash(ls *)")
    prefixes += rules("Bash(cd:*)", "Bash(popd:*)", "Bash(git diff:*)")
    for command in [
        "cp evil.sh .git/hooks/pre-commit",
        "mv x .mcp.json",
        "tee .peri/settings.local.json",
        "cat sub/.GIT/config",
        "cp --target-directory=.claude x",
        "cp x ~/.bashrc",
        "cp x $HOME/.bashrc",
        "cp x ${HOME}/.bashrc",
        "cp x /etc/profile",
        "cp x ../twin/a",
        "cp x src/../../twin/a",
        "cp x src/out/a",  # a link to a folder outside
        "ls ~",
        "cd ~",
        "cd ..",
        "cd",  # home
        "cd $DIR",
        "popd",  # wherever the stack says
    ]:
        assert bash(ws, prefixes, command) == "ask", command
        assert suggest_and_grant(ws, command)[0] == [], command
    for command in [
        "cp a.txt src/b.txt",
        "cat /dev/null src/a.py",
        "cat .gitignore .github/x .peri-notes",
        "cd src",
        "git diff HEAD~1 -- src",
    ]:
        assert bash(ws, prefixes, command) == "allow", command
    assert bash(ws, rules("Bash(cat .git/config)"), "cat .git/config") == "allow"


@pytest.mark.parametrize(
    ("command", "expected", "follow_up"),
    [
        ("uv run python -c 'print(1)'", "Bash(uv run python -c 'print(1)')", "uv run python -c x"),
        ("uv run python3.12 t.py", "Bash(uv run python3.12 t.py)", "uv run python3.12 -c 'x'"),
        ("poetry run python t.py", "Bash(poetry run python t.py)", "poetry run python -c 'x'"),
        ("npm exec node t.js", "Bash(npm exec node t.js)", "npm exec node -e 'x'"),
        ("yarn node t.js", "Bash(yarn node t.js)", "yarn node -e 'x'"),
        ("uv run --with rich pytest", "Bash(uv run --with rich pytest)", "uv run python -c 'x'"),
        ("uv tool run ruff check", "Bash(uv tool run ruff:*)", "uv tool run python -c 'x'"),
        ("uv tool install ruff", "Bash(uv tool install:*)", "uv tool run python -c 'x'"),
        ("pnpm dlx cowsay hi", "Bash(pnpm dlx cowsay:*)", "pnpm dlx evil"),
        ("npm run", "Bash(npm run)", "npm run evil"),
        ("git -C sub status", "Bash(git -C sub status)", "git -c core.sshCommand='rm -rf ~' fetch"),
        ("git -c k=v log", "Bash(git -c k=v log)", "git -c core.pager='sh -c x' log"),
        ("make", "Bash(make)", "make -f evil.mk"),
        ("docker run -v x:/y alpine", "Bash(docker run -v x:/y alpine)", "docker run -v /:/h a"),
        ("watch -n 1 ls", "Bash(watch -n 1 ls)", "watch -n 1 'rm -rf x'"),
    ],
)
def test_a_runner_is_offered_its_program_only_when_the_program_is_named_and_tame(
    ws: Path, command: str, expected: str, follow_up: str
) -> None:
    """The word after `uv run`, `npm exec`, `yarn` is the program that runs: an interpreter or
    a shell there runs anything, as does a runner with no program named; an option before a
    subcommand (`git -c core.sshCommand=...`) can make any subcommand run anything."""
    suggested, granted = suggest_and_grant(ws, command)
    assert suggested == [expected]
    assert bash(ws, granted, command) == "allow"
    assert bash(ws, granted, follow_up) == "ask"


def test_tame_runners_and_subcommands_keep_their_prefix(ws: Path) -> None:
    for command, expected in [
        ("uv run pytest -q", "Bash(uv run pytest:*)"),
        ("git diff HEAD~1", "Bash(git diff:*)"),
        ("npm run test -- --watch", "Bash(npm run test:*)"),
    ]:
        assert suggest_and_grant(ws, command)[0] == [expected]
    # ...but a runner's program is never a shell's prefix; npx and pipx are runners themselves.
    assert suggest_and_grant(ws, "npm exec bash")[0] == ["Bash(npm exec bash)"]
    assert suggest_and_grant(ws, "npx eslint .")[0] == ["Bash(npx eslint .)"]
    assert suggest_and_grant(ws, "pipx run black .")[0] == ["Bash(pipx run black .)"]


@pytest.mark.parametrize(
    ("command", "follow_up"),
    [
        ("echo hello | bash", "echo 'rm -rf x' | bash"),
        ("cat x | python3", "cat evil | python3"),
        ("cat x | python3 -", "cat evil | python3 -"),
        ("echo ls | sudo sh", "echo 'rm -rf x' | sudo sh"),
        ("echo ls | bash -s", "echo 'rm -rf x' | bash -s"),
        ("bash < run.sh", "bash < evil.sh"),
        ("echo x.sh | xargs bash", "echo evil.sh | xargs bash"),
        ("cat t.js | node", "cat evil.js | node"),
    ],
)
def test_a_shell_or_interpreter_reading_its_program_from_stdin_gets_no_rule(
    ws: Path, command: str, follow_up: str
) -> None:
    """`Bash(echo:*)` and `Bash(bash)` would allow any program piped into the shell next."""
    suggested, granted = suggest_and_grant(ws, command)
    assert suggested == []
    assert bash(ws, granted, follow_up) == "ask"
    # A program named in the command is what the exact rule allows.
    assert suggest_and_grant(ws, "bash run.sh")[0] == ["Bash(bash run.sh)"]


@pytest.mark.parametrize(
    "command", ["cd build && rm -rf dist", "cd src && make test", "pushd src && ls", "cd src"]
)
def test_a_command_that_changes_directory_gets_no_rule(ws: Path, command: str) -> None:
    """After a `cd` the later parts mean other files: `Bash(cd:*)` and `Bash(rm -rf dist)`
    together allowed `cd ~ && rm -rf dist`."""
    suggested, granted = suggest_and_grant(ws, command)
    assert suggested == []
    assert bash(ws, granted, "cd ~ && rm -rf dist") == "ask"


@pytest.mark.parametrize(
    ("path", "expected", "follow_up"),
    [
        ("notes.txt", "Edit(./notes.txt)", ".envrc"),
        (".envrc", "Edit(./.envrc)", "src/a.py"),
        (".vscode/tasks.json", "Edit(./.vscode/tasks.json)", ".vscode/settings.json"),
        (".husky/pre-commit", "Edit(./.husky/pre-commit)", ".husky/pre-push"),
        (".github/workflows/ci.yml", "Edit(./.github/workflows/ci.yml)", ".github/workflows/x.yml"),
        (".devcontainer/a.json", "Edit(./.devcontainer/a.json)", ".devcontainer/post.sh"),
        ("sub/.VSCode/tasks.json", "Edit(./sub/.VSCode/tasks.json)", "sub/.VSCode/launch.json"),
    ],
)
def test_a_top_level_file_or_one_that_runs_on_its_own_is_offered_only_itself(
    ws: Path, path: str, expected: str, follow_up: str
) -> None:
    """A top-level file's folder is the whole workspace (`.envrc`, the Makefile); files in
    `.vscode/`, `.husky/`, `.github/` run without being asked: only the file edited is offered."""
    call = call_of("Write", {"file_path": path}, ws)
    ctx = RuleContext(ws, trusted=True)
    suggested = suggest_rules(call, ctx)
    assert suggested == [expected]
    granted = [parse_rule(s, "allow", RuleSource("session")) for s in suggested]
    assert decide(call, granted, ctx, "default").action == "allow"
    other = call_of("Write", {"file_path": follow_up}, ws)
    assert decide(other, granted, ctx, "default").action == "ask"


# --- deny rules against smuggling -------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "$'rm' f",  # ANSI-C quoting is decoded
        "$'\\x72\\x6d' f",
        "\\rm f",
        "r''m f",
        '"rm" f',
        "/bin/rm f",  # a path names the program by its basename
        "./../../bin/rm f",
        "command -p rm f",
        "command rm f",
        "builtin rm f",
        "env X=1 rm f",
        "env -u HOME -- rm f",
        "exec -a x rm f",
        "nice -n 5 rm f",
        "nohup rm f",
        "timeout -s KILL 5 rm f",
        "echo f | xargs -0 -n 1 rm",
        "sudo -u root /usr/bin/rm f",
        "time -p rm f",
        "stdbuf -oL rm f",
        "setsid rm f",
        "busybox rm f",
        "env -S 'rm -f x'",
        "find . -name x -exec /bin/rm {} ;",
        "trap 'rm f' EXIT",
        "coproc rm f",
        "coproc { rm f; }",
        "f() { rm f; }",
    ],
)
def test_a_deny_rule_sees_the_program_by_its_name(ws: Path, command: str) -> None:
    deny = rules("Bash(rm:*)", behavior="deny")
    for mode in ("bypass", "default", "accept-edits"):
        assert bash(ws, deny, command, mode) == "deny", (command, mode)


@pytest.mark.parametrize(
    "command",
    [
        "$(echo rm) f",
        "`echo rm` f",
        "x=rm; $x f",
        '"$x" f',
        "${x:-rm} f",
        'eval "$(echo rm f)"',
        "eval $cmd",
        'sh -c "$x"',
        'bash -c "$(cat script)"',
        'sudo "$@"',
        "env $x f",
        "$HOME/bin/r* f",
        "eval 'echo $(('",  # shell code that cannot be read
    ],
)
def test_a_program_known_only_at_run_time_may_be_what_any_deny_rule_names(
    ws: Path, command: str
) -> None:
    """Denied in bypass mode (nobody would be asked), asked in the others."""
    deny = rules("Bash(rm:*)", behavior="deny")
    decision = judge(ws, deny, "Bash", {"command": command}, "bypass")
    assert decision.action == "deny", command
    assert decision.rule is not None and decision.rule.text == "Bash(rm:*)"
    assert bash(ws, deny, command, "default") == "ask", command
    # An allow rule never covers it either, and with no Bash deny or ask rule the mode decides.
    assert bash(ws, [*deny, *rules("Bash(echo:*)", "Bash(sh:*)")], command, "default") == "ask"
    assert bash(ws, [], command, "bypass") == "allow"


def test_a_malformed_command_with_a_deny_rule_is_denied_in_bypass_mode(ws: Path) -> None:
    deny = rules("Bash(rm:*)", behavior="deny")
    hidden = "$'\\x72m' 'f"  # `rm`, written so its text is nowhere in the command
    assert bash(ws, deny, hidden, "bypass") == "deny"  # the grammar finds an error
    assert bash(ws, deny, hidden, "default") == "ask"
    assert bash(ws, deny, "ls; rm x &&", "default") == "deny"  # the rule's text is in it
    assert bash(ws, [*deny, *rules("Bash")], "ls 'x", "default") == "ask"


def test_names_known_before_running_are_not_deny_matches(ws: Path) -> None:
    deny = rules("Bash(rm:*)", behavior="deny")
    for command in ["echo rm", "rmdir x", "ls $HOME", "echo $(ls) > /dev/null", "/bin/rmx f"]:
        assert bash(ws, deny, command, "bypass") == "allow", command
