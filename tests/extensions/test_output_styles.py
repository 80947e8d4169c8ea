"""Output styles: the built-ins, Claude Code's files and their front matter, precedence, the
`outputStyle` setting's resolution, and every hostile file skipped with a message naming it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from peri_cli.extensions.output_styles import (
    BUILTIN_STYLES,
    MAX_STYLE_BYTES,
    StyleSource,
    choose_style,
    load_styles,
    save_output_style,
    style_sources,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def style_file(folder: Path, filename: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text(text, encoding="utf-8")
    return path


def project(ws: Path) -> Path:
    return ws / ".claude" / "output-styles"


def user(home: Path) -> Path:
    return home / ".claude" / "output-styles"


def test_the_built_ins_are_default_explanatory_and_learning_in_peris_own_words(
    ws: Path, home: Path
) -> None:
    catalog = load_styles(style_sources(ws, home))
    assert [s.name for s in catalog.styles] == ["Default", "Explanatory", "Learning"]
    assert [s.name for s in BUILTIN_STYLES] == ["Default", "Explanatory", "Learning"]
    default, explanatory, learning = catalog.styles
    assert default.body == "" and default.is_default
    # The teaching styles keep the coding instructions (they help with engineering work).
    assert explanatory.keep_coding and learning.keep_coding
    assert "Insight:" in explanatory.body and "TODO(human)" in learning.body
    assert all(s.source == "built-in" and s.description for s in catalog.styles)
    assert catalog.problems == ()


def test_a_project_and_a_user_style_with_front_matter(ws: Path, home: Path) -> None:
    style_file(
        project(ws),
        "pirate.md",
        "---\nname: Pirate\ndescription: Talks like a pirate\n"
        "keep-coding-instructions: true\n---\n\nSay arr.\n",
    )
    style_file(user(home), "terse.md", "Answer in one line.\n")  # no front matter at all
    catalog = load_styles(style_sources(ws, home))
    names = [s.name for s in catalog.styles]
    assert names == ["Default", "Explanatory", "Learning", "Pirate", "terse"]
    pirate, terse = catalog.find("pirate"), catalog.find("TERSE")
    assert pirate is not None and terse is not None
    assert (pirate.description, pirate.body, pirate.keep_coding) == (
        "Talks like a pirate",
        "Say arr.",
        True,
    )
    assert pirate.source == "project" and pirate.path == project(ws) / "pirate.md"
    # The name comes from the file's name when the front matter has none; a custom style
    # drops the coding instructions unless it says to keep them (Claude Code's default).
    assert (terse.body, terse.keep_coding, terse.source) == ("Answer in one line.", False, "user")


def test_on_a_name_clash_built_ins_win_then_project_then_user(ws: Path, home: Path) -> None:
    style_file(project(ws), "a.md", "---\nname: explanatory\n---\nmine\n")
    style_file(project(ws), "b.md", "---\nname: Shared\n---\nproject's\n")
    style_file(user(home), "c.md", "---\nname: shared\n---\nuser's\n")
    catalog = load_styles(style_sources(ws, home))
    explanatory, shared = catalog.find("Explanatory"), catalog.find("shared")
    assert explanatory is not None and explanatory.source == "built-in"
    assert shared is not None and shared.body == "project's"
    assert len(catalog.problems) == 2
    assert "a.md" in catalog.problems[0] and "built-in" in catalog.problems[0]
    assert "c.md" in catalog.problems[1] and "b.md" in catalog.problems[1]


def test_a_plugin_folder_is_one_more_source(ws: Path, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin" / "output-styles"
    style_file(plugin, "insight.md", "---\ndescription: From a plugin\n---\nBe insightful.\n")
    catalog = load_styles([StyleSource(plugin, "plugin:insights")])
    style = catalog.find("insight")
    assert style is not None and style.source == "plugin:insights"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\nname: [a, b]\n---\nbody\n", "name"),
        ("---\nname: ''\n---\nbody\n", "name"),
        ('---\nname: "two\\nlines"\n---\nbody\n', "name"),
        ("---\ndescription: 3\n---\nbody\n", "description"),
        ("---\nkeep-coding-instructions: sometimes\n---\nbody\n", "keep-coding-instructions"),
        ("---\nname: x\nbody without a closing line\n", "not closed"),
        ("---\n- a list\n---\nbody\n", "mapping"),
        ("---\na: &x [1]\nb: *x\n---\nbody\n", "anchors"),
    ],
)
def test_malformed_front_matter_is_skipped_with_a_message_naming_the_file(
    ws: Path, home: Path, text: str, reason: str
) -> None:
    style_file(project(ws), "bad.md", text)
    style_file(project(ws), "good.md", "fine\n")
    catalog = load_styles(style_sources(ws, home))
    assert [s.name for s in catalog.styles][3:] == ["good"]
    (problem,) = catalog.problems
    assert str(project(ws) / "bad.md") in problem and reason in problem


def test_hostile_files_are_skipped_never_read_whole_or_followed_out(
    ws: Path, home: Path, tmp_path: Path
) -> None:
    folder = project(ws)
    style_file(folder, "huge.md", "x" * (MAX_STYLE_BYTES + 1))
    (folder / "latin1.md").write_bytes(b"caf\xe9\n")
    (folder / "binary.md").write_bytes(b"a\x00b")
    os.mkfifo(folder / "fifo.md")  # reading it would block start-up
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-OUTSIDE\n")
    (folder / "link.md").symlink_to(secret)  # a repository's link out of the workspace
    (folder / "dir.md").mkdir()
    catalog = load_styles(style_sources(ws, home))
    assert [s.name for s in catalog.styles] == ["Default", "Explanatory", "Learning"]
    said = "\n".join(catalog.problems)
    for name in ("huge.md", "latin1.md", "binary.md", "fifo.md", "link.md", "dir.md"):
        assert str(folder / name) in said, name
    assert "SECRET-OUTSIDE" not in said
    assert "outside" in said and "UTF-8" in said and "FIFO" in said and "larger" in said


def test_a_users_own_link_to_a_file_elsewhere_is_read(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "mine.md"
    style_file(target.parent, "mine.md", "From my dotfiles.\n")
    user(home).mkdir(parents=True)
    (user(home) / "mine.md").symlink_to(target)
    style = load_styles([StyleSource(user(home), "user")]).find("mine")
    assert style is not None and style.body == "From my dotfiles."


def test_choose_resolves_the_setting_and_warns_on_an_unknown_name(ws: Path, home: Path) -> None:
    catalog = load_styles(style_sources(ws, home))
    assert choose_style(catalog, None) == (catalog.styles[0], None)
    assert choose_style(catalog, "default")[0].is_default
    assert choose_style(catalog, "explanatory")[0].name == "Explanatory"
    style, warning = choose_style(catalog, "Nonesuch\x1b[2J")
    assert style.is_default
    assert warning is not None and "Nonesuch" in warning and "\x1b" not in warning
    assert "Default" in warning and "Explanatory" in warning


def test_saving_writes_the_local_settings_file_and_keeps_its_other_keys(ws: Path) -> None:
    local = ws / ".peri" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"model": "m"}')
    path = save_output_style(ws, "Explanatory")
    assert path == local
    import json

    assert json.loads(local.read_text()) == {"model": "m", "outputStyle": "Explanatory"}
    assert "settings.local.json" in (ws / ".peri" / ".gitignore").read_text()
