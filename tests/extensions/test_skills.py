"""Skills: discovery, precedence, the frozen listing, `/name args`, and every hostile file."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from peri_cli.base.frontmatter import MAX_FRONT_MATTER_BYTES
from peri_cli.context.estimate import estimate_tokens
from peri_cli.extensions.skills.catalog import MAX_SKILL_BYTES, SkillCatalog, SkillError, SkillRoot
from peri_cli.extensions.skills.discovery import (
    BUILTIN_ROOT,
    MAX_SKILLS_PER_ROOT,
    discover_skills,
    load_skills,
    skill_roots,
)
from peri_cli.extensions.skills.invocation import expand_arguments, invoke_user_skill
from peri_cli.extensions.skills.listing import skill_listing

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "skills-anthropic"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def peri_home(tmp_path: Path) -> Path:
    return tmp_path / "peri-home"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def empty_builtin(tmp_path: Path) -> Path:
    path = tmp_path / "builtin"
    path.mkdir()
    return path


def skill_md(root: Path, dirname: str, front: str, body: str = "Do the thing.\n") -> Path:
    path = root / dirname / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")
    return path


def simple(root: Path, name: str, description: str = "Helps.", extra: str = "") -> Path:
    return skill_md(root, name, f"name: {name}\ndescription: {description}\n{extra}".strip())


def catalog_of(
    root: Path, *, scope: str = "personal", workspace: Path | None = None
) -> SkillCatalog:
    return discover_skills([SkillRoot(root, scope, "test")], workspace=workspace)  # type: ignore[arg-type]


def load(home: Path, peri_home: Path, ws: Path, builtin: Path) -> SkillCatalog:
    return load_skills(home=home, peri_home=peri_home, workspace=ws, builtin=builtin)


def only_problem(catalog: SkillCatalog) -> str:
    assert len(catalog.problems) == 1, catalog.problems
    return catalog.problems[0].message


# --- discovery and fields ----------------------------------------------------------------------


def test_roots_in_precedence_order(home: Path, peri_home: Path, ws: Path) -> None:
    roots = skill_roots(home=home, peri_home=peri_home, workspace=ws)
    assert [(r.path, r.scope) for r in roots] == [
        (home / ".claude" / "skills", "personal"),
        (home / ".agents" / "skills", "personal"),
        (peri_home / "skills", "personal"),
        (ws / ".claude" / "skills", "project"),
        (ws / ".agents" / "skills", "project"),
        (BUILTIN_ROOT, "builtin"),
    ]
    assert [r.label for r in roots][:3] == [
        "~/.claude/skills",
        "~/.agents/skills",
        "$PERI_HOME/skills",
    ]


def test_a_skill_loads_with_every_field(tmp_path: Path) -> None:
    path = skill_md(
        tmp_path,
        "deploy",
        "name: deploy\n"
        "description: Ship it.\n"
        "allowed-tools: Read, Bash(git push:*)\n"
        "disable-model-invocation: true\n"
        "user-invocable: true\n"
        "argument-hint: [env]\n"
        "license: MIT\n"
        "metadata:\n  owner: ops",
    )
    catalog = catalog_of(tmp_path)
    assert catalog.problems == ()
    skill = catalog.get("deploy")
    assert skill is not None
    assert skill.description == "Ship it."
    assert skill.path == path
    assert skill.directory == path.parent
    assert skill.allowed_tools == ("Read", "Bash(git push:*)")
    assert skill.disable_model_invocation is True
    assert skill.model_invocable is False
    assert skill.user_invocable is True
    assert skill.argument_hint == "[env]"  # YAML read `[env]` as a list; the hint is kept as typed
    assert skill.extra == {"license": "MIT", "metadata": {"owner": "ops"}}
    assert skill.scope == "personal"


def test_front_matter_that_is_almost_yaml_loads_as_written(tmp_path: Path) -> None:
    skill_md(
        tmp_path,
        "loose",
        "name: loose\ndescription: Use when: the user asks\nargument-hint: [pr] [priority]",
    )
    catalog = catalog_of(tmp_path)
    assert catalog.problems == ()
    skill = catalog.get("loose")
    assert skill is not None
    assert (skill.description, skill.argument_hint) == (
        "Use when: the user asks",
        "[pr] [priority]",
    )


def test_name_defaults_to_the_directory(tmp_path: Path) -> None:
    skill_md(tmp_path, "lint-fix", "description: Fix lint.")
    assert catalog_of(tmp_path).get("lint-fix") is not None


def test_allowed_tools_as_list_or_space_separated_string(tmp_path: Path) -> None:
    simple(tmp_path, "a", extra="allowed-tools:\n  - Read\n  - Grep")
    simple(tmp_path, "b", extra="allowed-tools: Bash(git add:*) Bash(git status:*) Read")
    catalog = catalog_of(tmp_path)
    assert catalog.get("a").allowed_tools == ("Read", "Grep")  # type: ignore[union-attr]
    assert catalog.get("b").allowed_tools == (  # type: ignore[union-attr]
        "Bash(git add:*)",
        "Bash(git status:*)",
        "Read",
    )


def test_allowed_tools_honoured_only_for_personal_skills_or_a_trusted_workspace(
    home: Path, peri_home: Path, ws: Path, empty_builtin: Path
) -> None:
    simple(home / ".claude" / "skills", "mine", extra="allowed-tools: Bash")
    simple(ws / ".claude" / "skills", "theirs", extra="allowed-tools: Bash, Write")
    catalog = load(home, peri_home, ws, empty_builtin)
    mine, theirs = catalog.get("mine"), catalog.get("theirs")
    assert mine is not None and theirs is not None
    assert (mine.scope, theirs.scope) == ("personal", "project")
    assert mine.granted_tools(trusted=False) == ("Bash",)
    assert theirs.granted_tools(trusted=False) == ()
    assert theirs.granted_tools(trusted=True) == ("Bash", "Write")
    # What the trust dialog lists: the project skill's grants, with its source.
    assert catalog.untrusted_grants() == [
        ("skill theirs pre-approves Bash, Write", ".claude/skills")
    ]


def test_block_scalar_description_keeps_its_lines(tmp_path: Path) -> None:
    skill_md(tmp_path, "multi", "name: multi\ndescription: |-\n  First line.\n  Second line.")
    assert catalog_of(tmp_path).get("multi").description == "First line.\nSecond line."  # type: ignore[union-attr]


def test_body_is_read_when_asked_not_at_discovery(tmp_path: Path) -> None:
    path = simple(tmp_path, "lazy")
    catalog = catalog_of(tmp_path)
    with path.open("a", encoding="utf-8") as f:
        f.write("Added after discovery.\n")
    skill = catalog.get("lazy")
    assert skill is not None
    assert skill.load_body() == "Do the thing.\nAdded after discovery.\n"


def test_body_that_vanished_is_a_one_line_error(tmp_path: Path) -> None:
    path = simple(tmp_path, "gone")
    skill = catalog_of(tmp_path).get("gone")
    assert skill is not None
    path.unlink()
    with pytest.raises(SkillError) as e:
        skill.load_body()
    assert "gone" in str(e.value) and "\n" not in str(e.value)


def test_hidden_directories_and_plain_files_in_a_root_are_not_skills(tmp_path: Path) -> None:
    simple(tmp_path, ".git")
    (tmp_path / "README.md").write_text("not a skill")
    (tmp_path / "empty-dir").mkdir()
    catalog = catalog_of(tmp_path)
    assert catalog.skills == () and catalog.problems == ()


def test_missing_roots_are_silent(
    home: Path, peri_home: Path, ws: Path, empty_builtin: Path
) -> None:
    catalog = load(home, peri_home, ws, empty_builtin)
    assert catalog.skills == () and catalog.problems == ()


# --- precedence and shadowing -------------------------------------------------------------------


def test_personal_wins_over_project_and_the_loser_is_listed_as_shadowed(
    home: Path, peri_home: Path, ws: Path, empty_builtin: Path
) -> None:
    simple(ws / ".claude" / "skills", "review", "Project review.")
    simple(home / ".agents" / "skills", "review", "Personal review.")
    simple(peri_home / "skills", "review", "Peri-home review.")
    simple(ws / ".agents" / "skills", "only-here", "Shared location.")
    catalog = load(home, peri_home, ws, empty_builtin)
    assert catalog.get("review").description == "Personal review."  # type: ignore[union-attr]
    assert catalog.get("only-here") is not None
    assert catalog.problems == ()
    entries = {(e.name, e.source): e for e in catalog.entries()}
    assert entries[("review", "~/.agents/skills")].status == "active"
    shadowed = entries[("review", ".claude/skills")]
    assert shadowed.status == "shadowed"
    assert shadowed.shadowed_by == "~/.agents/skills"
    assert entries[("review", "$PERI_HOME/skills")].shadowed_by == "~/.agents/skills"


def test_builtin_comes_last(home: Path, peri_home: Path, ws: Path, empty_builtin: Path) -> None:
    simple(empty_builtin, "helper", "Built in.")
    simple(ws / ".claude" / "skills", "helper", "Project.")
    catalog = load(home, peri_home, ws, empty_builtin)
    assert catalog.get("helper").scope == "project"  # type: ignore[union-attr]


def test_workspace_that_is_home_is_one_root_not_a_shadow_of_itself(
    home: Path, peri_home: Path, empty_builtin: Path
) -> None:
    simple(home / ".claude" / "skills", "mine")
    catalog = load(home, peri_home, home, empty_builtin)
    assert [s.scope for s in catalog.skills] == ["personal"]
    assert [e.status for e in catalog.entries()] == ["active"]


def test_duplicate_names_in_one_root_are_reported_and_the_second_skipped(tmp_path: Path) -> None:
    skill_md(tmp_path, "a-dir", "name: same\ndescription: First.")
    skill_md(tmp_path, "b-dir", "name: same\ndescription: Second.")
    catalog = catalog_of(tmp_path)
    assert catalog.get("same").description == "First."  # type: ignore[union-attr]
    assert "duplicate" in only_problem(catalog)
    assert catalog.problems[0].path == tmp_path / "b-dir" / "SKILL.md"


def test_the_shipped_builtin_skills_load_cleanly() -> None:
    catalog = catalog_of(BUILTIN_ROOT, scope="builtin")
    assert catalog.problems == ()


# --- hostile and malformed files (each reported once, skipped, never fatal) ---------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"name: x\ndescription: no front matter\n", "front matter"),
        (b"---\nname: x\ndescription: never closed\n", "not closed"),
        (b"---\nname: x\ndescription: d\ntools:\n  - a\n  b: c\n---\nbody\n", "YAML"),
        (b"---\nname: [unclosed\ndescription: d\n---\nbody\n", "invalid name"),
        (b"---\n- a list\n- not a mapping\n---\n", "mapping"),
        (b"---\nname: x\n---\nbody\n", "description"),
        (b"---\nname: x\ndescription: '   '\n---\n", "description"),
        (b"---\nname: x\ndescription: 42\n---\n", "description"),
        (b"---\nname: has\tspace\ndescription: d\n---\n", "name"),
        (b"---\nname: ../escape\ndescription: d\n---\n", "name"),
        (b"---\nname: " + b"x" * 65 + b"\ndescription: d\n---\n", "name"),
        (b"---\nname: x\ndescription: !!python/object:os.system d\n---\n", "YAML"),
        (b"---\nname: x\ndescription: \xff\xfe bad\n---\n", "UTF-8"),
        (b"---\nname: x\x00\ndescription: d\n---\n", "binary"),
        (b"", "front matter"),
    ],
)
def test_malformed_front_matter_is_one_problem(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "SKILL.md").write_bytes(content)
    simple(tmp_path, "good")
    catalog = catalog_of(tmp_path)
    assert [s.name for s in catalog.skills] == ["good"]
    assert expected in only_problem(catalog)
    assert catalog.problems[0].path == tmp_path / "bad" / "SKILL.md"


def test_a_title_for_a_name_is_known_by_its_folder(tmp_path: Path) -> None:
    skill_md(tmp_path, "writing-rules", "name: Writing Hookify Rules\ndescription: d")
    catalog = catalog_of(tmp_path)
    assert [s.name for s in catalog.skills] == ["writing-rules"]
    assert catalog.problems == ()


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{','.join([f'*{prev}'] * 8)}]")
    skill_md(tmp_path, "laughs", "name: laughs\ndescription: d\n" + "\n".join(lines))
    assert "alias" in only_problem(catalog_of(tmp_path))


def test_a_single_anchor_is_refused_too(tmp_path: Path) -> None:
    skill_md(tmp_path, "anchor", "name: anchor\ndescription: &d text")
    assert "alias" in only_problem(catalog_of(tmp_path))


@pytest.mark.parametrize("depth", [40, 5000])  # ours, and past libyaml's own limit
def test_deep_nesting_is_refused(tmp_path: Path, depth: int) -> None:
    skill_md(tmp_path, "deep", "name: deep\ndescription: d\nx: " + "[" * depth + "]" * depth)
    assert "nested" in only_problem(catalog_of(tmp_path))


def test_front_matter_over_the_cap_is_refused(tmp_path: Path) -> None:
    filler = "x: " + "y" * MAX_FRONT_MATTER_BYTES
    skill_md(tmp_path, "fat", f"name: fat\ndescription: d\n{filler}")
    assert "front matter" in only_problem(catalog_of(tmp_path))


def test_huge_file_is_refused_unread(tmp_path: Path) -> None:
    path = simple(tmp_path, "huge")
    with path.open("r+b") as f:
        f.truncate(MAX_SKILL_BYTES + 1)  # sparse: cheap to make, fatal if read whole
    assert "larger than" in only_problem(catalog_of(tmp_path))


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    (tmp_path / "pipe").mkdir()
    os.mkfifo(tmp_path / "pipe" / "SKILL.md")
    assert "regular file" in only_problem(catalog_of(tmp_path))


def test_directory_named_skill_md_is_refused(tmp_path: Path) -> None:
    (tmp_path / "odd" / "SKILL.md").mkdir(parents=True)
    assert "regular file" in only_problem(catalog_of(tmp_path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_a_problem(tmp_path: Path) -> None:
    path = simple(tmp_path, "locked")
    path.chmod(0)
    try:
        assert "permission denied" in only_problem(catalog_of(tmp_path))
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists any directory")
def test_unlistable_root_is_a_problem(tmp_path: Path) -> None:
    root = tmp_path / "root"
    simple(root, "x")
    root.chmod(0)
    try:
        catalog = catalog_of(root)
        assert "permission denied" in only_problem(catalog)
    finally:
        root.chmod(stat.S_IRWXU)


def test_symlink_loops_are_problems(tmp_path: Path) -> None:
    (tmp_path / "loop-dir").symlink_to(tmp_path / "loop-dir")
    (tmp_path / "loop-file").mkdir()
    (tmp_path / "loop-file" / "SKILL.md").symlink_to(tmp_path / "loop-file" / "SKILL.md")
    simple(tmp_path, "fine")
    catalog = catalog_of(tmp_path)
    assert [s.name for s in catalog.skills] == ["fine"]
    assert len(catalog.problems) == 2
    assert all("symlink loop" in p.message for p in catalog.problems)


def test_dangling_symlink_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "dangling").mkdir()
    (tmp_path / "dangling" / "SKILL.md").symlink_to(tmp_path / "nowhere.md")
    assert "broken symlink" in only_problem(catalog_of(tmp_path))


def test_root_that_is_a_file_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "root").write_text("oops")
    assert "not a directory" in only_problem(catalog_of(tmp_path / "root"))


def test_project_skill_symlinked_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    outside = simple(tmp_path / "elsewhere", "secret")
    root = ws / ".claude" / "skills"
    (root / "secret").mkdir(parents=True)
    (root / "secret" / "SKILL.md").symlink_to(outside)
    catalog = catalog_of(root, scope="project", workspace=ws)
    assert "outside the workspace" in only_problem(catalog)
    # A personal skill may live anywhere (dotfiles repositories are symlinked in).
    assert catalog_of(root, scope="personal").get("secret") is not None


def test_project_skill_swapped_for_a_symlink_out_after_discovery_is_not_read(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    root = ws / ".agents" / "skills"
    path = simple(root, "swap")
    outside = simple(tmp_path / "elsewhere", "swap")
    skill = catalog_of(root, scope="project", workspace=ws).get("swap")
    assert skill is not None
    path.unlink()
    path.symlink_to(outside)
    with pytest.raises(SkillError, match="resolves outside"):
        skill.load_body()


def test_too_many_skills_in_one_root_stops_with_one_problem(tmp_path: Path) -> None:
    for i in range(MAX_SKILLS_PER_ROOT + 5):
        (tmp_path / f"s{i:05d}").mkdir()
    simple(tmp_path, "s00000")
    catalog = catalog_of(tmp_path)
    assert "more than" in only_problem(catalog)
    assert catalog.get("s00000") is not None


def test_optional_field_of_the_wrong_type_is_a_warning_and_the_skill_loads(tmp_path: Path) -> None:
    simple(tmp_path, "odd", extra="user-invocable: sometimes\nallowed-tools: 7")
    catalog = catalog_of(tmp_path)
    skill = catalog.get("odd")
    assert skill is not None
    assert skill.user_invocable is True and skill.allowed_tools == ()
    assert len(catalog.problems) == 2
    assert not any(p.skipped for p in catalog.problems)


def test_problems_are_one_visible_line_each(tmp_path: Path) -> None:
    (tmp_path / "bad\x1b]52;c;x\x07").mkdir()
    (tmp_path / "bad\x1b]52;c;x\x07" / "SKILL.md").write_text("---\nname: [x\n---\n")
    catalog = catalog_of(tmp_path)
    [line] = catalog.warnings()
    assert "\x1b" not in line and "\x07" not in line and "\n" not in line
    assert "SKILL.md" in line


def test_broken_skills_are_listed_with_their_source_and_problem(tmp_path: Path) -> None:
    skill_md(tmp_path, "broken", "name: broken")
    [entry] = catalog_of(tmp_path).entries()
    assert (entry.name, entry.status, entry.source) == ("broken", "broken", "test")
    assert entry.problems and "description" in entry.problems[0]


def test_a_broken_skill_folder_is_listed_too(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    [entry] = catalog_of(tmp_path).entries()
    assert (entry.name, entry.status, entry.problems) == ("loop", "broken", ("symlink loop",))


def test_crlf_and_bom_files_load(tmp_path: Path) -> None:
    (tmp_path / "win").mkdir()
    (tmp_path / "win" / "SKILL.md").write_bytes(
        b"\xef\xbb\xbf---\r\nname: win\r\ndescription: Windows.\r\n---\r\nBody\r\n"
    )
    catalog = catalog_of(tmp_path)
    assert catalog.problems == ()
    assert catalog.get("win").load_body() == "Body\r\n"  # type: ignore[union-attr]


# --- the listing in the frozen prompt -----------------------------------------------------------


def test_listing_has_names_and_one_line_descriptions(tmp_path: Path) -> None:
    skill_md(tmp_path, "multi", "name: multi\ndescription: |-\n  First line.\n  Second line.")
    simple(tmp_path, "hidden", extra="disable-model-invocation: true")
    listing = skill_listing(catalog_of(tmp_path), context_window=200_000)
    assert listing.text.startswith("# Skills\n")
    assert "- multi: First line. Second line.\n" in listing.text + "\n"
    assert "hidden" not in listing.text
    assert listing.shown == ("multi",)
    assert listing.shortened == 0 and listing.omitted == 0


def test_listing_of_nothing_is_empty(tmp_path: Path) -> None:
    simple(tmp_path, "hidden", extra="disable-model-invocation: true")
    assert skill_listing(catalog_of(tmp_path), context_window=200_000).text == ""


def test_listing_is_capped_and_shortens_the_longest_first(tmp_path: Path) -> None:
    for i in range(8):
        simple(tmp_path, f"short{i}", f"Short description {i}.")
    for i in range(4):
        simple(tmp_path, f"long{i}", "word " * 400)
    window = 50_000  # 2% = 1,000 tokens
    listing = skill_listing(catalog_of(tmp_path), context_window=window)
    assert estimate_tokens(listing.text) <= window * 0.02
    for i in range(8):
        assert f"- short{i}: Short description {i}." in listing.text
    assert listing.shortened == 4 and listing.omitted == 0
    assert "…" in listing.text
    assert "shortened" in listing.text  # the note says so


def test_listing_drops_skills_only_when_names_alone_do_not_fit(tmp_path: Path) -> None:
    for i in range(300):
        simple(tmp_path, f"skill-number-{i:03d}", "A description that is not short at all." * 3)
    listing = skill_listing(catalog_of(tmp_path), context_window=20_000)  # 400 tokens
    assert estimate_tokens(listing.text) <= 400
    assert listing.omitted > 0
    assert len(listing.shown) + listing.omitted == 300
    assert f"{listing.omitted} more" in listing.text


def test_listing_shows_control_characters_visibly(tmp_path: Path) -> None:
    simple(tmp_path, "esc", '"Bad \\e[2J text"')
    listing = skill_listing(catalog_of(tmp_path), context_window=200_000)
    assert "\x1b" not in listing.text and "␛[2J" in listing.text


# --- `/name args` -------------------------------------------------------------------------------


def test_user_invocation_substitutes_arguments(tmp_path: Path) -> None:
    skill_md(tmp_path, "fix", "name: fix\ndescription: d", "Fix issue $ARGUMENTS now.\n")
    inv = invoke_user_skill(catalog_of(tmp_path), "/fix 123 please")
    assert inv is not None
    assert inv.skill.name == "fix" and inv.arguments == "123 please"
    assert "Fix issue 123 please now." in inv.message
    assert "ARGUMENTS:" not in inv.message
    assert str(tmp_path / "fix") in inv.message  # where the skill lives


def test_user_invocation_appends_arguments_without_a_placeholder(tmp_path: Path) -> None:
    skill_md(tmp_path, "plain", "name: plain\ndescription: d", "Body text.\n")
    inv = invoke_user_skill(catalog_of(tmp_path), "/plain do it")
    assert inv is not None and inv.message.rstrip().endswith("Body text.\n\nARGUMENTS: do it")
    bare = invoke_user_skill(catalog_of(tmp_path), "/plain")
    assert bare is not None and "ARGUMENTS" not in bare.message


def test_not_a_skill_invocation(tmp_path: Path) -> None:
    simple(tmp_path, "auto", extra="user-invocable: false")
    catalog = catalog_of(tmp_path)
    assert invoke_user_skill(catalog, "/auto go") is None
    assert invoke_user_skill(catalog, "/unknown") is None
    assert invoke_user_skill(catalog, "auto") is None
    assert invoke_user_skill(catalog, "/") is None
    assert invoke_user_skill(catalog, "/tmp/file.txt") is None


def test_a_user_only_skill_can_be_invoked_by_the_user(tmp_path: Path) -> None:
    simple(tmp_path, "manual", extra="disable-model-invocation: true")
    assert invoke_user_skill(catalog_of(tmp_path), "/manual") is not None


def test_positional_and_named_arguments(tmp_path: Path) -> None:
    skill_md(
        tmp_path,
        "mv",
        "name: mv\ndescription: d\nargument-hint: [old] [new]\narguments: [old-name, new-name]",
        "Rename $0 to $1 ($ARGUMENTS[0] -> $ARGUMENTS[1]); $old-name/$new-name; $2 missing; "
        "dir ${CLAUDE_SKILL_DIR}\n",
    )
    inv = invoke_user_skill(catalog_of(tmp_path), '/mv "My Button" Button')
    assert inv is not None
    assert (
        f"Rename My Button to Button (My Button -> Button); My Button/Button;  missing; "
        f"dir {tmp_path / 'mv'}" in inv.message
    )


def test_dollar_digits_are_left_alone_when_the_skill_takes_no_positional_arguments() -> None:
    body = "Price $5.00 per MTok, $25 output. Args: $ARGUMENTS"
    assert expand_arguments(body, "a b c d e f", directory=Path("/s")) == (
        "Price $5.00 per MTok, $25 output. Args: a b c d e f"
    )


def test_substituted_arguments_are_not_expanded_again(tmp_path: Path) -> None:
    skill_md(tmp_path, "echo", "name: echo\ndescription: d", "Say: $ARGUMENTS\n")
    inv = invoke_user_skill(catalog_of(tmp_path), "/echo $ARGUMENTS ${CLAUDE_SKILL_DIR}")
    assert inv is not None and "Say: $ARGUMENTS ${CLAUDE_SKILL_DIR}" in inv.message


def test_user_invocation_of_a_vanished_skill_raises_a_one_line_error(tmp_path: Path) -> None:
    path = simple(tmp_path, "gone")
    catalog = catalog_of(tmp_path)
    shutil.rmtree(path.parent)
    with pytest.raises(SkillError):
        invoke_user_skill(catalog, "/gone")


# --- the real skills in ../shared/fixtures ------------------------------------------------------

EXPECTED_STARTS = {
    "algorithmic-art": "Creating algorithmic art using p5.js",
    "brand-guidelines": "Applies Anthropic's official brand colors",
    "claude-api": "Reference for the Claude API / Anthropic SDK",
    "frontend-design": "Guidance for distinctive, intentional visual design",
    "mcp-builder": "Guide for creating high-quality MCP",
    "webapp-testing": "Toolkit for interacting with and testing local web applications",
}


@pytest.fixture
def real_skills(tmp_path: Path) -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"fixtures not found at {FIXTURES}")
    root = tmp_path / "home" / ".claude" / "skills"
    shutil.copytree(FIXTURES, root)
    return root


def test_all_real_skills_load_with_their_name_and_description(real_skills: Path) -> None:
    catalog = catalog_of(real_skills)
    dirs = sorted(p.name for p in real_skills.iterdir() if (p / "SKILL.md").is_file())
    assert catalog.problems == ()
    assert sorted(s.name for s in catalog.skills) == dirs
    assert set(EXPECTED_STARTS) <= set(dirs)
    for skill in catalog.skills:
        assert skill.name == skill.directory.name
        if skill.name in EXPECTED_STARTS:
            assert skill.description.startswith(EXPECTED_STARTS[skill.name])
        assert skill.extra.get("license") == "Complete terms in LICENSE.txt"
    api = catalog.get("claude-api")
    assert api is not None
    assert api.description.count("\n") == 2  # the `|-` block: three lines, no trailing newline
    assert api.description.endswith("don't Read the file).")


def test_real_skills_fit_the_listing_of_a_small_window(real_skills: Path) -> None:
    listing = skill_listing(catalog_of(real_skills), context_window=32_000)
    assert estimate_tokens(listing.text) <= 640
    assert len(listing.shown) == 6 and listing.omitted == 0


def test_slash_claude_api_works(real_skills: Path) -> None:
    inv = invoke_user_skill(catalog_of(real_skills), "/claude-api migrate to the newest model now")
    assert inv is not None
    assert "# Building LLM-Powered Applications with Claude" in inv.message
    assert "| $5.00      | $25.00      |" in inv.message  # prices survive six arguments
    assert inv.message.rstrip().endswith("ARGUMENTS: migrate to the newest model now")
    assert str(real_skills / "claude-api") in inv.message
