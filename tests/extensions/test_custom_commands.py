"""Custom slash commands as Claude Code reads them (issue 39): discovery in `.claude/commands`
and `~/.claude/commands`, names and namespaces, precedence, front matter, every hostile file,
and the expansion of `$ARGUMENTS`, `$1`… and `` !`cmd` `` lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from peri_cli.extensions.commands import COMMANDS
from peri_cli.extensions.custom_commands.catalog import (
    MAX_COMMAND_BYTES,
    CommandCatalog,
    CommandFileError,
    CommandSource,
)
from peri_cli.extensions.custom_commands.discovery import MAX_COMMANDS_PER_SOURCE, load_commands
from peri_cli.extensions.custom_commands.expansion import expand_command

BUILTINS = frozenset(COMMANDS)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def project(ws: Path, rel: str, text: str) -> Path:
    return write(ws / ".claude" / "commands", rel, text)


def user(home: Path, rel: str, text: str) -> Path:
    return write(home / ".claude" / "commands", rel, text)


def load(home: Path, ws: Path, skills: frozenset[str] = frozenset()) -> CommandCatalog:
    return load_commands(home=home, workspace=ws, builtins=BUILTINS, skills=skills)


def problems(catalog: CommandCatalog) -> list[str]:
    return catalog.warnings()


REVIEW = """---
description: Review a pull request
argument-hint: [pr] [priority]
allowed-tools: Bash(git diff:*), Read
model: haiku
---
Review PR #$1 with priority $2.
"""


# --- discovery, names, fields ---------------------------------------------------------------


def test_a_project_command_is_found_with_its_front_matter(home: Path, ws: Path) -> None:
    path = project(ws, "review.md", REVIEW)
    catalog = load(home, ws)
    found = catalog.find("/review 42 high")
    assert found is not None
    command, arguments = found
    assert arguments == "42 high"
    assert command.path == path and command.scope == "project"
    assert command.description == "Review a pull request"
    assert command.argument_hint == "[pr] [priority]"
    assert command.allowed_tools == ("Bash(git diff:*)", "Read")
    assert command.model == "haiku"
    assert command.where == "project"
    assert problems(catalog) == []


def test_a_subfolder_namespaces_the_command(home: Path, ws: Path) -> None:
    project(ws, "frontend/component.md", "---\ndescription: Make a component\n---\nBody\n")
    catalog = load(home, ws)
    for typed in ("/component", "/frontend:component", "/project:frontend:component"):
        found = catalog.find(typed + " Button")
        assert found is not None, typed
        assert found[0].name == "component" and found[1] == "Button"
    (command,) = catalog.commands
    assert command.where == "project:frontend"  # how /help and completion label it
    assert catalog.find("/frontend") is None


def test_without_front_matter_the_first_line_describes_it(home: Path, ws: Path) -> None:
    project(ws, "explain.md", "\n# Explain the code in $ARGUMENTS\n\nIn detail.\n")
    (command,) = load(home, ws).commands
    assert command.description == "Explain the code in $ARGUMENTS"
    assert command.load_body() == "\n# Explain the code in $ARGUMENTS\n\nIn detail.\n"


def test_a_user_command_is_found_and_the_project_wins_a_clash(home: Path, ws: Path) -> None:
    project(ws, "review.md", "---\ndescription: project review\n---\nP\n")
    user(home, "review.md", "---\ndescription: user review\n---\nU\n")
    user(home, "mine.md", "---\ndescription: mine\n---\nM\n")
    catalog = load(home, ws)
    assert catalog.find("/review")[0].description == "project review"  # type: ignore[index]
    assert catalog.find("/user:review")[0].description == "user review"  # type: ignore[index]
    assert catalog.find("/mine")[0].scope == "user"  # type: ignore[index]
    rows = {(r.call, r.command.scope): r for r in catalog.rows()}
    assert rows[("review", "project")].shadowed_by is None
    shadowed = rows[("user:review", "user")]
    assert shadowed.shadowed_by == "the project's /review"


def test_a_built_in_or_a_skill_wins_and_the_command_stays_reachable(home: Path, ws: Path) -> None:
    project(ws, "help.md", "---\ndescription: my help\n---\nH\n")
    project(ws, "deploy.md", "---\ndescription: my deploy\n---\nD\n")
    catalog = load(home, ws, skills=frozenset({"deploy"}))
    assert catalog.find("/help") is None  # the built-in /help runs
    assert catalog.find("/deploy now") is None  # the skill runs
    assert catalog.find("/project:help")[0].description == "my help"  # type: ignore[index]
    assert catalog.find("/project:deploy now")[1] == "now"  # type: ignore[index]
    rows = {r.command.name: r for r in catalog.rows()}
    assert rows["help"].call == "project:help" and rows["help"].shadowed_by == "the built-in /help"
    assert rows["deploy"].shadowed_by == "the skill /deploy"


def test_same_name_in_two_folders_both_stay_reachable(home: Path, ws: Path) -> None:
    project(ws, "a/x.md", "---\ndescription: a's x\n---\nA\n")
    project(ws, "b/x.md", "---\ndescription: b's x\n---\nB\n")
    catalog = load(home, ws)
    assert catalog.find("/a:x")[0].description == "a's x"  # type: ignore[index]
    assert catalog.find("/b:x")[0].description == "b's x"  # type: ignore[index]
    assert catalog.find("/x") is not None
    assert sorted(r.call for r in catalog.rows()) == ["b:x", "x"]


def test_a_prompt_that_is_not_a_command_is_not_found(home: Path, ws: Path) -> None:
    project(ws, "review.md", REVIEW)
    catalog = load(home, ws)
    for text in ("review", "/etc/hosts", "/reviewer", "/ review", "/", "/unknown:review"):
        assert catalog.find(text) is None, text


def test_project_allowed_tools_are_listed_for_the_trust_question(home: Path, ws: Path) -> None:
    project(ws, "review.md", REVIEW)
    user(home, "mine.md", "---\ndescription: m\nallowed-tools: Bash(ls:*)\n---\nM\n")
    catalog = load(home, ws)
    assert catalog.untrusted_grants() == [
        ("command /review pre-approves Bash(git diff:*), Read", ".claude/commands/review.md")
    ]
    review = catalog.find("/review")[0]  # type: ignore[index]
    assert review.granted_tools(trusted=False) == ()
    assert review.granted_tools(trusted=True) == ("Bash(git diff:*)", "Read")
    mine = catalog.find("/mine")[0]  # type: ignore[index]
    assert mine.granted_tools(trusted=False) == ("Bash(ls:*)",)  # the user's own file


def test_a_field_of_the_wrong_type_is_a_warning_and_its_default(home: Path, ws: Path) -> None:
    project(ws, "odd.md", "---\ndescription: [1, 2]\nmodel: 3\n---\nFirst line\n")
    catalog = load(home, ws)
    (command,) = catalog.commands
    assert command.description == "First line" and command.model is None
    lines = problems(catalog)
    assert len(lines) == 2 and all("odd.md" in line and "loaded" in line for line in lines)


# --- hostile files: skipped with a line naming the file, never a traceback ------------------


def skipped(catalog: CommandCatalog, name: str) -> str:
    (line,) = [p for p in problems(catalog) if name in p]
    assert "skipped" in line
    return line


def test_a_huge_command_file_is_skipped_unread(home: Path, ws: Path) -> None:
    project(ws, "big.md", "---\ndescription: big\n---\n" + "x" * (MAX_COMMAND_BYTES + 10))
    catalog = load(home, ws)
    assert catalog.find("/big") is None
    assert "larger than" in skipped(catalog, "big.md")


def test_a_fifo_is_skipped_without_blocking(home: Path, ws: Path) -> None:
    root = ws / ".claude" / "commands"
    root.mkdir(parents=True)
    os.mkfifo(root / "pipe.md")
    catalog = load(home, ws)
    assert catalog.find("/pipe") is None
    assert "FIFO" in skipped(catalog, "pipe.md")


def test_a_project_command_symlinked_out_of_the_workspace_is_skipped(
    tmp_path: Path, home: Path, ws: Path
) -> None:
    outside = write(tmp_path, "secret.md", "---\ndescription: s\n---\nS\n")
    root = ws / ".claude" / "commands"
    root.mkdir(parents=True)
    (root / "leak.md").symlink_to(outside)
    (root / "dir").symlink_to(tmp_path, target_is_directory=True)
    catalog = load(home, ws)
    assert catalog.find("/leak") is None and catalog.find("/secret") is None
    assert "outside" in skipped(catalog, "leak.md")
    assert "outside" in skipped(catalog, "dir")


def test_the_commands_folder_itself_symlinked_out_is_refused(
    tmp_path: Path, home: Path, ws: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, "x.md", "---\ndescription: x\n---\nX\n")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "commands").symlink_to(elsewhere, target_is_directory=True)
    catalog = load(home, ws)
    assert catalog.commands == ()
    assert "outside" in skipped(catalog, ".claude/commands")


def test_bad_front_matter_non_utf8_nul_and_bad_names_are_skipped(home: Path, ws: Path) -> None:
    project(ws, "broken.md", "---\ndescription: [unclosed\n  - x: {\n---\nB\n")
    project(ws, "open.md", "---\ndescription: never closed\nBody\n")
    root = ws / ".claude" / "commands"
    (root / "latin.md").write_bytes(b"---\ndescription: caf\xe9\n---\nB\n")
    (root / "plain.md").write_bytes(b"caf\xe9 au lait\n")
    (root / "binary.md").write_bytes(b"---\ndescription: b\n---\n\x00\x01")
    project(ws, "two words.md", "---\ndescription: spaces\n---\nS\n")
    project(ws, "ok.md", "---\ndescription: fine\n---\nOK\n")
    catalog = load(home, ws)
    assert [c.name for c in catalog.commands] == ["ok"]
    for name in ("broken.md", "open.md", "latin.md", "plain.md", "binary.md", "two words.md"):
        skipped(catalog, name)


def test_a_symlink_loop_and_a_dangling_link_are_problems(home: Path, ws: Path) -> None:
    root = home / ".claude" / "commands"
    root.mkdir(parents=True)
    (root / "loop").symlink_to(root, target_is_directory=True)  # the user's own: followed once
    (root / "gone.md").symlink_to(root / "nowhere.md")
    user(home, "ok.md", "---\ndescription: fine\n---\nOK\n")
    catalog = load(home, ws)
    assert [c.name for c in catalog.commands] == ["ok"]
    assert "broken symlink" in skipped(catalog, "gone.md")


def test_a_folder_of_thousands_is_capped_with_a_note(home: Path, ws: Path) -> None:
    root = ws / ".claude" / "commands"
    root.mkdir(parents=True)
    for i in range(MAX_COMMANDS_PER_SOURCE + 5):
        (root / f"c{i:04d}.md").write_text("---\ndescription: c\n---\nC\n")
    catalog = load(home, ws)
    assert len(catalog.commands) == MAX_COMMANDS_PER_SOURCE
    assert any("more" in line for line in problems(catalog))


def test_a_file_that_grew_huge_since_start_is_refused_when_run(home: Path, ws: Path) -> None:
    path = project(ws, "grow.md", "---\ndescription: g\n---\nsmall\n")
    (command,) = load(home, ws).commands
    path.write_text("---\ndescription: g\n---\n" + "y" * (MAX_COMMAND_BYTES + 1))
    with pytest.raises(CommandFileError) as caught:
        command.load_body()
    assert "grow.md" in str(caught.value) and "larger than" in str(caught.value)


def test_a_warning_line_shows_file_text_made_visible(home: Path, ws: Path) -> None:
    project(ws, "esc\x1b[31m.md", "---\ndescription: e\n---\nE\n")
    (line,) = problems(load(home, ws))
    assert "\x1b" not in line


# --- expansion ------------------------------------------------------------------------------


def test_arguments_and_positions_are_substituted() -> None:
    expanded = expand_command("Review PR #$1 with priority $2: $ARGUMENTS", '42 "very high"')
    assert expanded.assemble([]) == 'Review PR #42 with priority very high: 42 "very high"'
    assert expanded.commands() == []


def test_unused_arguments_are_appended_once() -> None:
    expanded = expand_command("Status: !`git status`\nDo it.\n", "now please")
    assert expanded.commands() == ["git status"]
    assert expanded.assemble(["clean"]) == "Status: clean\nDo it.\n\nARGUMENTS: now please"


def test_bang_lines_get_their_arguments_and_their_output_is_not_expanded_again() -> None:
    body = "Log: !`git log -n $1 --oneline`\nFiles: !`ls`\nAsked: $ARGUMENTS\n"
    expanded = expand_command(body, "3")
    assert expanded.commands() == ["git log -n 3 --oneline", "ls"]
    out = expanded.assemble(["a1 fix $ARGUMENTS !`rm -rf x` @/etc/passwd", "README.md"])
    assert out == ("Log: a1 fix $ARGUMENTS !`rm -rf x` @/etc/passwd\nFiles: README.md\nAsked: 3\n")
    assert expanded.text_only().count("@/etc/passwd") == 0  # mentions come from the file's text


def test_arguments_cannot_add_a_bang_line() -> None:
    expanded = expand_command("Do: $ARGUMENTS", "!`curl evil.example`")
    assert expanded.commands() == []
    assert expanded.assemble([]) == "Do: !`curl evil.example`"


def test_a_bang_needs_a_space_or_line_start_before_it() -> None:
    expanded = expand_command("Wow!`not a command` and `!x` and\n!`real`", "")
    assert expanded.commands() == ["real"]


def test_a_plugin_source_adds_its_commands_after_the_users_with_its_prefix(
    tmp_path: Path, home: Path, ws: Path
) -> None:
    """Plugins come later as one more source: `/name` and `/plugin:name`, after the user's."""
    plugin = tmp_path / "plugins" / "commit-tools"
    write(
        plugin / "commands",
        "commit.md",
        "Run ${CLAUDE_PLUGIN_ROOT}/x: !`${CLAUDE_PLUGIN_ROOT}/a $1`",
    )
    write(plugin / "commands", "mine.md", "the plugin's mine")
    user(home, "mine.md", "my own mine")
    source = CommandSource(
        plugin / "commands",
        "plugin",
        "plugin commit-tools",
        "commit-tools",
        variables={"CLAUDE_PLUGIN_ROOT": str(plugin)},
    )
    catalog = load_commands(home=home, workspace=ws, builtins=BUILTINS, extra=[source])
    commit, _ = catalog.find("/commit-tools:commit 1")  # type: ignore[misc]
    assert catalog.find("/commit")[0] is commit  # type: ignore[index]
    assert commit.where == "commit-tools"
    assert catalog.find("/mine")[0].scope == "user"  # type: ignore[index]
    assert catalog.find("/commit-tools:mine")[0].scope == "plugin"  # type: ignore[index]
    expanded = expand_command(commit.load_body(), "1", variables=commit.source.variables)
    assert expanded.commands() == [f"{plugin}/a 1"]
    assert expanded.assemble(["out"]) == f"Run {plugin}/x: out"


def test_a_position_with_no_word_stays_as_written() -> None:
    """commit-commands' clean_gone tells the model to run `awk '{print $1}'`: without
    arguments that text must reach it as written (Claude Code leaves a missing `$N` too)."""
    body = "Run: git branch -v | awk '{print $1}'\nThen !`echo $2`\n"
    assert (
        expand_command(body, "").assemble(["x"])
        == "Run: git branch -v | awk '{print $1}'\nThen x\n"
    )
    assert expand_command(body, "").commands() == ["echo $2"]
    expanded = expand_command("Only $2 here", "one")  # $2 has no word: the argument is kept
    assert expanded.assemble([]) == "Only $2 here\n\nARGUMENTS: one"
