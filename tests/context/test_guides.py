"""Project guide discovery and `<!-- @import -->` expansion (PRODUCT.md §3)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peri_cli.context.guide_imports import MAX_IMPORT_DEPTH, GuideReadError, expand_imports
from peri_cli.context.guides import (
    MAX_GUIDE_FILE_BYTES,
    cut_to_budget,
    discover_guides,
    read_guide_file,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "project" / "ws"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def imp(name: str) -> str:
    return f"<!-- @import {name} -->"


# --- which file is the guide -------------------------------------------------------------------


def test_no_guide_anywhere_gives_empty_result(ws: Path, home: Path) -> None:
    result = discover_guides(ws, home=home)
    assert result.text == ""
    assert result.files == []
    assert result.warnings == []


def test_agents_md_wins_over_claude_md_and_dot_claude(ws: Path, home: Path) -> None:
    write(ws / "AGENTS.md", "agents rules")
    write(ws / "CLAUDE.md", "claude rules")
    write(ws / ".claude" / "AGENTS.md", "dot-claude rules")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "AGENTS.md"]
    assert "agents rules" in result.text
    assert "claude rules" not in result.text
    assert "dot-claude rules" not in result.text


def test_claude_md_wins_over_dot_claude_agents(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", "claude rules")
    write(ws / ".claude" / "AGENTS.md", "dot-claude rules")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "CLAUDE.md"]
    assert "claude rules" in result.text
    assert "dot-claude rules" not in result.text


def test_dot_claude_agents_used_when_it_is_the_only_one(ws: Path, home: Path) -> None:
    write(ws / ".claude" / "AGENTS.md", "dot-claude rules")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / ".claude" / "AGENTS.md"]
    assert result.text == "# Guide: .claude/AGENTS.md\n\ndot-claude rules\n"


def test_text_has_a_stable_header_per_file(ws: Path, home: Path) -> None:
    write(ws / "AGENTS.md", "\n\nline one\nline two\n\n")
    write(ws / "CLAUDE.local.md", "local\n")
    result = discover_guides(ws, home=home)
    assert result.text == (
        "# Guide: AGENTS.md\n\nline one\nline two\n\n# Guide: CLAUDE.local.md\n\nlocal\n"
    )
    assert discover_guides(ws, home=home) == result


def test_no_walk_up_to_parent_directories(ws: Path, home: Path) -> None:
    write(ws.parent / "AGENTS.md", "parent rules")
    write(ws.parent / "CLAUDE.md", "parent claude")
    result = discover_guides(ws, home=home)
    assert result.text == ""
    assert result.files == []


def test_subdirectory_guide_not_used_from_the_root(ws: Path, home: Path) -> None:
    write(ws / "sub" / "AGENTS.md", "sub rules")
    assert discover_guides(ws, home=home).files == []
    assert discover_guides(ws / "sub", home=home).files == [ws / "sub" / "AGENTS.md"]


def test_user_level_guide_when_no_project_guide(ws: Path, home: Path) -> None:
    write(home / ".claude" / "AGENTS.md", "user rules")
    result = discover_guides(ws, home=home)
    assert result.files == [home / ".claude" / "AGENTS.md"]
    assert result.text.startswith("# Guide: ~/.claude/AGENTS.md\n")
    assert "user rules" in result.text


def test_project_guide_wins_over_user_level_and_extra_paths(ws: Path, home: Path) -> None:
    write(home / ".claude" / "AGENTS.md", "user rules")
    extra = write(home / "extra.md", "extra rules")
    write(ws / ".claude" / "AGENTS.md", "project rules")
    result = discover_guides(ws, home=home, extra_paths=[extra])
    assert result.files == [ws / ".claude" / "AGENTS.md"]
    assert "user rules" not in result.text
    assert "extra rules" not in result.text


def test_extra_paths_only_after_user_level(ws: Path, home: Path, tmp_path: Path) -> None:
    first = write(tmp_path / "a" / "first.md", "first extra")
    second = write(tmp_path / "b" / "second.md", "second extra")
    result = discover_guides(ws, home=home, extra_paths=[tmp_path / "missing.md", first, second])
    assert result.files == [first]
    assert "first extra" in result.text
    assert "second extra" not in result.text

    write(home / ".claude" / "AGENTS.md", "user rules")
    result = discover_guides(ws, home=home, extra_paths=[first])
    assert result.files == [home / ".claude" / "AGENTS.md"]


def test_extra_paths_expand_tilde_and_resolve_relative_to_workspace(ws: Path, home: Path) -> None:
    write(home / "guides" / "mine.md", "from home")
    result = discover_guides(ws, home=home, extra_paths=[Path("~/guides/mine.md")])
    assert result.files == [home / "guides" / "mine.md"]

    write(ws / "docs" / "rules.md", "relative rules")
    result = discover_guides(ws, home=home, extra_paths=[Path("docs/rules.md")])
    assert result.files == [ws / "docs" / "rules.md"]
    assert "relative rules" in result.text


def test_empty_first_guide_still_blocks_the_fallback(ws: Path, home: Path) -> None:
    write(ws / "AGENTS.md", "  \n")
    write(home / ".claude" / "AGENTS.md", "user rules")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "AGENTS.md"]
    assert result.text == ""


# --- CLAUDE.local.md ---------------------------------------------------------------------------


def test_claude_local_appended_after_the_guide(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", "shared rules")
    write(ws / "CLAUDE.local.md", "my local rules")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "CLAUDE.md", ws / "CLAUDE.local.md"]
    assert result.text.index("shared rules") < result.text.index("my local rules")


@pytest.mark.parametrize("content", ["", "   \n\t\n"])
def test_empty_claude_local_ignored(ws: Path, home: Path, content: str) -> None:
    write(ws / "AGENTS.md", "rules")
    write(ws / "CLAUDE.local.md", content)
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "AGENTS.md"]
    assert "CLAUDE.local.md" not in result.text


def test_claude_local_alone_is_the_guide_text(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.local.md", "only local")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "CLAUDE.local.md"]
    assert result.text == "# Guide: CLAUDE.local.md\n\nonly local\n"


def test_claude_local_appended_to_user_level_fallback(ws: Path, home: Path) -> None:
    write(home / ".claude" / "AGENTS.md", "user rules")
    write(ws / "CLAUDE.local.md", "local rules")
    result = discover_guides(ws, home=home)
    assert result.files == [home / ".claude" / "AGENTS.md", ws / "CLAUDE.local.md"]
    assert result.text.index("user rules") < result.text.index("local rules")


def test_claude_local_expands_imports(ws: Path, home: Path) -> None:
    write(ws / "notes.md", "imported note")
    write(ws / "CLAUDE.local.md", f"local\n{imp('notes.md')}\n")
    result = discover_guides(ws, home=home)
    assert "imported note" in result.text
    assert ws / "notes.md" in result.files


# --- imports -----------------------------------------------------------------------------------


def test_claude_md_expands_imports_relative_to_itself(ws: Path, home: Path) -> None:
    write(ws / "docs" / "style.md", "use tabs")
    write(ws / "CLAUDE.md", f"before\n{imp('docs/style.md')}\nafter\n")
    result = discover_guides(ws, home=home)
    assert "before\nuse tabs\nafter" in result.text
    assert "@import" not in result.text
    assert result.files == [ws / "CLAUDE.md", ws / "docs" / "style.md"]
    assert result.warnings == []


def test_nested_import_is_relative_to_the_importing_file(ws: Path, home: Path) -> None:
    write(ws / "docs" / "a.md", f"A\n{imp('b.md')}\n")
    write(ws / "docs" / "b.md", "B")
    write(ws / "b.md", "WRONG B")
    write(ws / "CLAUDE.md", imp("docs/a.md"))
    result = discover_guides(ws, home=home)
    assert "A\nB" in result.text
    assert "WRONG" not in result.text


def test_import_with_tilde_means_home(ws: Path, home: Path) -> None:
    write(home / "shared.md", "shared from home")
    write(ws / "CLAUDE.md", imp("~/shared.md"))
    result = discover_guides(ws, home=home, allow_outside=True)  # a trusted workspace
    assert "shared from home" in result.text
    assert home / "shared.md" in result.files


def test_agents_md_is_never_expanded(ws: Path, home: Path) -> None:
    write(ws / "style.md", "use tabs")
    write(ws / "AGENTS.md", f"rules\n{imp('style.md')}\n")
    result = discover_guides(ws, home=home)
    assert imp("style.md") in result.text
    assert "use tabs" not in result.text
    assert result.files == [ws / "AGENTS.md"]
    assert result.warnings == []


def test_dot_claude_agents_md_is_never_expanded(ws: Path, home: Path) -> None:
    write(ws / ".claude" / "style.md", "use tabs")
    write(ws / ".claude" / "AGENTS.md", imp("style.md"))
    result = discover_guides(ws, home=home)
    assert imp("style.md") in result.text
    assert "use tabs" not in result.text


def test_three_levels_expand(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", f"root {imp('l1.md')}")
    write(ws / "l1.md", f"one {imp('l2.md')}")
    write(ws / "l2.md", f"two {imp('l3.md')}")
    write(ws / "l3.md", "three")
    result = discover_guides(ws, home=home)
    assert "root one two three" in result.text
    assert result.warnings == []
    assert result.files == [ws / "CLAUDE.md", ws / "l1.md", ws / "l2.md", ws / "l3.md"]


def test_fourth_level_is_left_as_written_and_reported(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", f"root {imp('l1.md')}")
    write(ws / "l1.md", f"one {imp('l2.md')}")
    write(ws / "l2.md", f"two {imp('l3.md')}")
    write(ws / "l3.md", f"three {imp('l4.md')}")
    write(ws / "l4.md", "four")
    result = discover_guides(ws, home=home)
    assert f"root one two three {imp('l4.md')}" in result.text
    assert "four" not in result.text
    assert ws / "l4.md" not in result.files
    assert len(result.warnings) == 1
    assert "l3.md" in result.warnings[0]
    assert "deeper than 3 levels" in result.warnings[0]


def test_cycle_left_as_written_and_reported_once(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", f"root {imp('a.md')} {imp('a.md')}")
    write(ws / "a.md", f"A {imp('b.md')}")
    write(ws / "b.md", f"B {imp('a.md')}")
    result = discover_guides(ws, home=home)
    assert result.text.count(f"A B {imp('a.md')}") == 2
    cycle = [w for w in result.warnings if "cycle" in w]
    assert len(cycle) == 1
    assert "b.md" in cycle[0]


def test_self_import_is_a_cycle(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", f"root {imp('CLAUDE.md')}")
    result = discover_guides(ws, home=home)
    assert f"root {imp('CLAUDE.md')}" in result.text
    assert len(result.warnings) == 1
    assert "cycle" in result.warnings[0]


def test_missing_import_left_as_written_and_reported_once(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", f"{imp('gone.md')}\nand again {imp('gone.md')}\n")
    result = discover_guides(ws, home=home)
    assert result.text.count(imp("gone.md")) == 2
    assert len(result.warnings) == 1
    assert "gone.md" in result.warnings[0]
    assert "not found" in result.warnings[0]


def test_problem_met_twice_via_claude_local_is_reported_once(ws: Path, home: Path) -> None:
    # CLAUDE.md imports CLAUDE.local.md, which is then appended (and expanded) again.
    write(ws / "CLAUDE.local.md", f"local {imp('gone.md')}")
    write(ws / "CLAUDE.md", imp("CLAUDE.local.md"))
    result = discover_guides(ws, home=home)
    assert result.text.count(f"local {imp('gone.md')}") == 2
    assert len(result.warnings) == 1
    assert "gone.md" in result.warnings[0]


def test_diamond_import_is_not_a_cycle(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", f"{imp('a.md')} {imp('b.md')}")
    write(ws / "a.md", f"A {imp('common.md')}")
    write(ws / "b.md", f"B {imp('common.md')}")
    write(ws / "common.md", "C")
    result = discover_guides(ws, home=home)
    assert "A C B C" in result.text
    assert result.warnings == []
    assert result.files.count(ws / "common.md") == 1


def test_binary_import_is_reported(ws: Path, home: Path) -> None:
    (ws / "blob.md").write_bytes(b"\x00\x01\x02")
    write(ws / "CLAUDE.md", imp("blob.md"))
    result = discover_guides(ws, home=home)
    assert imp("blob.md") in result.text
    assert len(result.warnings) == 1
    assert "binary" in result.warnings[0]


# --- budget ------------------------------------------------------------------------------------


def test_over_budget_text_is_cut_with_a_visible_note(ws: Path, home: Path) -> None:
    write(ws / "AGENTS.md", "".join(f"line {i:04d}\n" for i in range(500)))
    result = discover_guides(ws, home=home, budget_bytes=1000)
    shown, note = result.text.rstrip("\n").rsplit("\n", 1)
    assert re.fullmatch(r"\[guide cut: \d+ of \d+ bytes shown; .*\]", note)
    assert len((shown + "\n").encode()) <= 1000
    assert re.search(r"line \d{4}$", shown)  # cut at a line boundary
    assert "line 0499" not in result.text
    assert any("budget" in w for w in result.warnings)


def test_under_budget_text_is_not_cut(ws: Path, home: Path) -> None:
    write(ws / "AGENTS.md", "short")
    result = discover_guides(ws, home=home, budget_bytes=1000)
    assert "guide cut" not in result.text
    assert result.warnings == []


def test_budget_counts_imported_text(ws: Path, home: Path) -> None:
    write(ws / "big.md", "x" * 5000)
    write(ws / "CLAUDE.md", imp("big.md"))
    result = discover_guides(ws, home=home, budget_bytes=2000)
    assert "[guide cut:" in result.text
    assert result.text.count("x") <= 2000


def test_cut_never_splits_a_multibyte_character() -> None:
    text = "é" * 100  # 200 bytes, no newline
    for budget in range(1, 60):
        shown, warning = cut_to_budget(text, budget)
        body = shown.split("[guide cut:")[0].removesuffix("\n")
        assert set(body) <= {"é"}
        assert len(body.encode()) <= budget
        assert warning is not None


def test_cut_prefers_a_line_boundary() -> None:
    shown, _ = cut_to_budget("aaaa\nbbbb\ncccc\n", 12)
    assert shown.startswith("aaaa\nbbbb\n[guide cut: 10 of 15 bytes shown")


@given(st.text(max_size=300), st.integers(min_value=0, max_value=400))
def test_cut_property(text: str, budget: int) -> None:
    shown, warning = cut_to_budget(text, budget)
    total = len(text.encode())
    if total <= budget:
        assert (shown, warning) == (text, None)
    else:
        body, note = shown.rsplit("[guide cut: ", 1)
        shown_bytes = int(note.split(" ", 1)[0])
        assert shown_bytes <= budget
        kept = text.encode()[:shown_bytes].decode()  # never splits a character
        # A newline is added before the note when the kept part does not end with one (it may
        # equal the next character of the text, so compare with the byte count, not a prefix).
        assert body in (kept, kept + "\n") and (body == kept or not kept.endswith("\n"))
        assert f"of {total} bytes shown" in note
        assert warning is not None


# --- bad files ---------------------------------------------------------------------------------


def test_binary_guide_is_reported_and_the_next_candidate_used(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").write_bytes(b"PK\x03\x04\x00\x00binary")
    write(ws / "CLAUDE.md", "claude rules")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "CLAUDE.md"]
    assert "claude rules" in result.text
    assert len(result.warnings) == 1
    assert "AGENTS.md" in result.warnings[0]
    assert "binary" in result.warnings[0]


def test_invalid_utf8_guide_is_binary(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").write_bytes(b"caf\xe9 rules")
    result = discover_guides(ws, home=home)
    assert result.text == ""
    assert result.files == []
    assert "not valid UTF-8" in result.warnings[0]


def test_directory_named_agents_md_is_reported_not_fatal(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").mkdir()
    write(ws / ".claude" / "AGENTS.md", "dot-claude rules")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / ".claude" / "AGENTS.md"]
    assert len(result.warnings) == 1
    assert "AGENTS.md: is a directory" in result.warnings[0]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_guide_is_reported(ws: Path, home: Path) -> None:
    guide = write(ws / "AGENTS.md", "secret")
    guide.chmod(0)
    try:
        result = discover_guides(ws, home=home)
    finally:
        guide.chmod(0o644)
    assert result.files == []
    assert "permission denied" in result.warnings[0]


def test_unreadable_guide_via_reader_is_reported(ws: Path, home: Path) -> None:
    write(ws / "AGENTS.md", "rules")
    write(ws / "CLAUDE.md", "claude rules")

    def read(path: Path) -> str:
        if path.name == "AGENTS.md":
            raise PermissionError(13, "Permission denied")
        return read_guide_file(path)

    result = discover_guides(ws, home=home, read=read)
    assert result.files == [ws / "CLAUDE.md"]
    assert result.warnings == ["AGENTS.md: permission denied; skipped"]


def test_binary_claude_local_is_reported(ws: Path, home: Path) -> None:
    write(ws / "AGENTS.md", "rules")
    (ws / "CLAUDE.local.md").write_bytes(b"\x00")
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "AGENTS.md"]
    assert len(result.warnings) == 1
    assert "CLAUDE.local.md" in result.warnings[0]


def test_read_guide_file_strips_bom_and_classifies_errors(tmp_path: Path) -> None:
    bom = tmp_path / "bom.md"
    bom.write_bytes(b"\xef\xbb\xbfhello")
    assert read_guide_file(bom) == "hello"
    with pytest.raises(GuideReadError) as missing:
        read_guide_file(tmp_path / "nope.md")
    assert missing.value.missing
    with pytest.raises(GuideReadError) as directory:
        read_guide_file(tmp_path)
    assert not directory.value.missing


# --- the expander as a pure function -----------------------------------------------------------


def memory_reader(files: dict[Path, str]) -> tuple[list[Path], Callable[[Path], str]]:
    calls: list[Path] = []

    def read(path: Path) -> str:
        calls.append(path)
        if path not in files:
            raise FileNotFoundError(path)
        return files[path]

    return calls, read


def test_expand_imports_is_pure_over_the_reader() -> None:
    root = Path("/virtual/CLAUDE.md")
    files = {Path("/virtual/x.md"): "X"}
    calls, read = memory_reader(files)
    result = expand_imports(f"a {imp('x.md')} b", root, read)
    assert result.text == "a X b"
    assert result.files == [Path("/virtual/x.md")]
    assert calls == [Path("/virtual/x.md")]


def test_expand_imports_max_depth_is_configurable() -> None:
    root = Path("/v/CLAUDE.md")
    files = {Path("/v/a.md"): f"A {imp('b.md')}", Path("/v/b.md"): "B"}
    _, read = memory_reader(files)
    one = expand_imports(imp("a.md"), root, read, max_depth=1)
    assert one.text == f"A {imp('b.md')}"
    assert len(one.warnings) == 1
    two = expand_imports(imp("a.md"), root, read, max_depth=2)
    assert two.text == "A B"
    assert two.warnings == []


NAMES = [f"f{i}.md" for i in range(6)]
DIR = Path("/g")
DIRECTIVE_RE = re.compile(r"<!-- @import (\S+) -->")


@st.composite
def import_graphs(draw: st.DrawFn) -> dict[str, list[str]]:
    """Files f0..f5, each importing a random list of files (some of them missing: m0.md)."""
    targets = st.sampled_from([*NAMES, "m0.md"])
    count = draw(st.integers(min_value=1, max_value=len(NAMES)))
    return {name: draw(st.lists(targets, max_size=3)) for name in NAMES[:count]}


def render(name: str, imports: list[str]) -> str:
    return f"<{name}>" + "".join(f"\n{imp(t)}" for t in imports) + "\n"


def reachable_within(graph: dict[str, list[str]], start: str, levels: int) -> set[str]:
    seen: set[str] = set()
    frontier = {start}
    for _ in range(levels):
        frontier = {t for f in frontier for t in graph.get(f, []) if t in graph}
        seen |= frontier
    return seen


@settings(max_examples=200, deadline=None)
@given(import_graphs())
def test_expansion_properties_on_random_graphs(graph: dict[str, list[str]]) -> None:
    files = {DIR / name: render(name, imports) for name, imports in graph.items()}
    calls, read = memory_reader(files)
    root = "f0.md"
    result = expand_imports(files[DIR / root], DIR / root, read)

    # Terminates (we got here) and the reader was asked a bounded number of times.
    assert len(calls) <= sum(3**level for level in range(1, MAX_IMPORT_DEPTH + 1))
    # Never deeper than 3 levels: every file pulled in is reachable within 3 imports of the root.
    pulled = {p.name for p in result.files}
    assert pulled <= reachable_within(graph, root, MAX_IMPORT_DEPTH)
    # Every direct import that exists and is not the root itself is expanded.
    assert {t for t in graph[root] if t in graph and t != root} <= pulled
    # Every directive left in the text was left on purpose and reported.
    for target in set(DIRECTIVE_RE.findall(result.text)):
        assert any(imp(target) in w for w in result.warnings), target
    # Reported once: no duplicate warnings.
    assert len(result.warnings) == len(set(result.warnings))
    # Each file's own text survives intact around its expanded imports.
    assert result.text.startswith(f"<{root}>")
    for name in pulled:
        assert f"<{name}>" in result.text


@settings(max_examples=100, deadline=None)
@given(import_graphs())
def test_acyclic_shallow_graph_expands_fully(graph: dict[str, list[str]]) -> None:
    # Keep only edges to a later, existing file: acyclic; and bound the chain to depth 3.
    dag = {n: [t for t in ts if t in graph and t > n][:2] for n, ts in graph.items()}
    depth: dict[str, int] = {}
    for name in sorted(dag, reverse=True):
        depth[name] = 1 + max((depth[t] for t in dag[name]), default=0)
    if depth["f0.md"] - 1 > MAX_IMPORT_DEPTH:
        return
    files = {DIR / name: render(name, imports) for name, imports in dag.items()}
    _, read = memory_reader(files)
    result = expand_imports(files[DIR / "f0.md"], DIR / "f0.md", read)
    assert "@import" not in result.text
    assert result.warnings == []


@given(st.text())
def test_text_without_directives_is_unchanged(text: str) -> None:
    def read(path: Path) -> str:
        raise AssertionError(f"nothing to read, asked for {path}")

    if "@import" in text:
        text = text.replace("@import", "@imp0rt")
    result = expand_imports(text, Path("/x/CLAUDE.md"), read)
    assert result.text == text
    assert result.files == []
    assert result.warnings == []


@given(st.integers(min_value=1, max_value=8))
def test_chain_expands_exactly_max_depth_levels(length: int) -> None:
    files = {
        DIR / f"c{i}.md": f"[{i}]" + (imp(f"c{i + 1}.md") if i < length else "")
        for i in range(1, length + 1)
    }
    _, read = memory_reader(files)
    result = expand_imports(imp("c1.md"), DIR / "CLAUDE.md", read)
    expanded = min(length, MAX_IMPORT_DEPTH)
    assert [p.name for p in result.files] == [f"c{i}.md" for i in range(1, expanded + 1)]
    assert (imp(f"c{expanded + 1}.md") in result.text) == (length > MAX_IMPORT_DEPTH)
    assert len(result.warnings) == (1 if length > MAX_IMPORT_DEPTH else 0)


# --- item 4: project guides stay inside the workspace ------------------------------------------


@pytest.mark.parametrize("written", ["../secret.txt", "~/.ssh/id_rsa", "ABSOLUTE"])
def test_item4_imports_outside_the_workspace_are_left_as_written(
    ws: Path, home: Path, written: str
) -> None:
    secret = write(ws.parent / "secret.txt", "TOP SECRET")
    write(home / ".ssh" / "id_rsa", "PRIVATE KEY")
    target = str(secret) if written == "ABSOLUTE" else written
    write(ws / "CLAUDE.md", f"rules\n{imp(target)}\n")
    result = discover_guides(ws, home=home)
    assert "SECRET" not in result.text and "PRIVATE" not in result.text
    assert imp(target) in result.text
    assert result.files == [ws / "CLAUDE.md"]
    (found,) = result.outside
    assert found.written == target and found.source == "CLAUDE.md"
    assert not found.resolved.is_relative_to(ws)
    assert result.warnings == []  # reported once, by the trust warning, not per import
    trusted = discover_guides(ws, home=home, allow_outside=True)
    assert "SECRET" in trusted.text or "PRIVATE" in trusted.text
    assert trusted.outside == []


def test_item4_import_through_a_symlink_out_is_outside(ws: Path, home: Path) -> None:
    write(ws.parent / "secret.txt", "TOP SECRET")
    (ws / "docs").mkdir()
    (ws / "docs" / "notes.md").symlink_to(ws.parent / "secret.txt")
    write(ws / "CLAUDE.md", imp("docs/notes.md"))
    result = discover_guides(ws, home=home)
    assert "SECRET" not in result.text
    assert [o.resolved for o in result.outside] == [ws.parent / "secret.txt"]


def test_item4_nested_import_out_of_an_inside_file_is_caught(ws: Path, home: Path) -> None:
    write(ws.parent / "secret.txt", "TOP SECRET")
    write(ws / "docs" / "a.md", "A\n" + imp("../../secret.txt"))
    write(ws / "CLAUDE.md", imp("docs/a.md"))
    result = discover_guides(ws, home=home)
    assert "A" in result.text and "SECRET" not in result.text
    assert [o.source for o in result.outside] == ["docs/a.md"]


def test_item4_inside_imports_and_symlinks_still_work(ws: Path, home: Path) -> None:
    write(ws / "docs" / "style.md", "STYLE")
    (ws / "CLAUDE.md").symlink_to(ws / "docs" / "guide.md")
    write(ws / "docs" / "guide.md", imp("docs/style.md"))  # relative to the link, as written
    result = discover_guides(ws, home=home)
    assert "STYLE" in result.text and result.outside == []


def test_item4_guide_symlinked_out_of_the_workspace_is_skipped(ws: Path, home: Path) -> None:
    write(ws.parent / "evil.md", "EVIL RULES")
    (ws / "CLAUDE.md").symlink_to(ws.parent / "evil.md")
    write(ws / ".claude" / "AGENTS.md", "fallback rules")
    result = discover_guides(ws, home=home)
    assert "EVIL" not in result.text
    assert "fallback rules" in result.text  # the next candidate is used
    assert [(o.written, o.resolved) for o in result.outside] == [
        ("CLAUDE.md", ws.parent / "evil.md")
    ]
    assert "EVIL" in discover_guides(ws, home=home, allow_outside=True).text


def test_item4_claude_local_symlinked_out_is_skipped(ws: Path, home: Path) -> None:
    write(ws.parent / "evil.md", "EVIL")
    (ws / "CLAUDE.local.md").symlink_to(ws.parent / "evil.md")
    result = discover_guides(ws, home=home)
    assert "EVIL" not in result.text and len(result.outside) == 1


def test_item4_project_extra_paths_are_confined_user_ones_are_not(ws: Path, home: Path) -> None:
    write(home / "mine.md", "MINE")
    write(ws / "docs" / "rules.md", "IN REPO")
    result = discover_guides(ws, home=home, project_paths=[Path("~/mine.md")])
    assert "MINE" not in result.text
    assert [o.written for o in result.outside] == ["~/mine.md"]
    result = discover_guides(ws, home=home, project_paths=[Path("docs/rules.md")])
    assert "IN REPO" in result.text and result.outside == []
    result = discover_guides(ws, home=home, extra_paths=[Path("~/mine.md")])
    assert "MINE" in result.text and result.outside == []


def test_item4_user_guides_may_import_from_anywhere(ws: Path, home: Path, tmp_path: Path) -> None:
    write(tmp_path / "shared" / "team.md", "TEAM")
    write(home / "guides" / "CLAUDE.md", imp(str(tmp_path / "shared" / "team.md")))
    result = discover_guides(ws, home=home, extra_paths=[home / "guides" / "CLAUDE.md"])
    assert "TEAM" in result.text and result.outside == []


def test_item4_missing_outside_import_is_just_missing(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", imp("../nope.md"))
    result = discover_guides(ws, home=home)
    assert result.outside == []
    assert "file not found" in result.warnings[0]


# --- item 16: special files never block -------------------------------------------------------


def test_item16_fifo_guide_and_import_do_not_hang(ws: Path, home: Path) -> None:
    os.mkfifo(ws / "AGENTS.md")
    os.mkfifo(ws / "pipe.md")
    write(ws / "CLAUDE.md", "rules\n" + imp("pipe.md"))
    result = discover_guides(ws, home=home)
    assert result.files == [ws / "CLAUDE.md"]
    assert imp("pipe.md") in result.text
    assert any("AGENTS.md" in w and "FIFO" in w for w in result.warnings)
    assert any("pipe.md" in w and "FIFO" in w for w in result.warnings)


def test_item16_import_of_dev_zero_is_refused(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", imp("/dev/zero"))
    result = discover_guides(ws, home=home, allow_outside=True)
    assert imp("/dev/zero") in result.text
    assert "device" in result.warnings[0]


def test_item16_oversized_guide_is_refused(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").write_bytes(b"x" * (MAX_GUIDE_FILE_BYTES + 1))
    write(ws / "CLAUDE.md", "small")
    result = discover_guides(ws, home=home)
    assert "small" in result.text
    assert "larger than 1 MiB" in result.warnings[0]


def test_item16_imports_stop_at_a_total_size(ws: Path, home: Path) -> None:
    write(ws / "big.md", "x" * 1000)
    write(ws / "CLAUDE.md", imp("big.md") * 10_000)
    result = expand_imports(
        (ws / "CLAUDE.md").read_text(),
        ws / "CLAUDE.md",
        read_guide_file,
        max_imported_chars=5000,
        label=lambda p: p.name,
    )
    assert result.text.count("x" * 1000) == 5
    assert result.text.count(imp("big.md")) == 10_000 - 5
    assert result.warnings == [
        "CLAUDE.md: imports add up to more than 5000 characters; the rest are left as written"
    ]
    full = discover_guides(ws, home=home)  # the default cap holds the real guide too
    assert "x" * 1000 in full.text and any("add up to" in w for w in full.warnings)


def test_guide_warnings_show_control_characters(ws: Path, home: Path) -> None:
    write(ws / "CLAUDE.md", imp("\x1b]52;c;aGk=\x07.md"))
    (warning,) = discover_guides(ws, home=home).warnings
    assert "\x1b" not in warning and "\x07" not in warning and "␛" in warning


def test_dangling_link_out_of_the_workspace_is_just_missing(ws: Path, home: Path) -> None:
    (ws / "CLAUDE.md").symlink_to(ws.parent / "gone.md")
    result = discover_guides(ws, home=home)
    assert result.outside == [] and result.files == []
