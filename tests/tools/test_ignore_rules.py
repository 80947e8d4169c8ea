"""Grep and Glob respect .gitignore, .ignore and .git/info/exclude as ripgrep does (issue 15)."""

import os
import shutil
from pathlib import Path

import pytest

from peri_cli.base.tool import ToolContext, ToolOutput
from peri_cli.tools.glob import GlobParams, GlobTool
from peri_cli.tools.grep import GrepParams, GrepTool

HAS_RG = shutil.which("rg") is not None
BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(not HAS_RG, reason="no rg")),
]

# The repository: a git-ignored build/ copy of the sources, nested rules with negation, an
# .ignore file, a git exclude, hidden files and the built-in skip list.
FILES = {
    ".gitignore": "build/\n*.log\n!keep.log\n/docs/generated/\n",
    ".ignore": "vendor/\n",
    ".git/info/exclude": "excluded.txt\n",
    ".git/config": "needle\n",
    ".env": "needle\n",
    ".hidden/h.py": "needle\n",
    "src/app.py": "needle\n",
    "build/app.py": "needle\n",
    "build/src/app.py": "needle\n",
    "debug.log": "needle\n",
    "keep.log": "needle\n",
    "excluded.txt": "needle\n",
    "vendor/v.py": "needle\n",
    "docs/generated/g.md": "needle\n",
    "docs/guide.md": "needle\n",
    "src/nested/.gitignore": "*.tmp\n!important.tmp\n",
    "src/nested/x.tmp": "needle\n",
    "src/nested/important.tmp": "needle\n",
    "src/nested/y.py": "needle\n",
    "src/nested/deeper/z.tmp": "needle\n",
    "other/x.tmp": "needle\n",
    "node_modules/m.js": "needle\n",
}
SEARCHED = [
    ".env",
    ".hidden/h.py",
    "docs/guide.md",
    "keep.log",
    "other/x.tmp",
    "src/app.py",
    "src/nested/important.tmp",
    "src/nested/y.py",
]
IGNORED = [
    "build/app.py",
    "build/src/app.py",
    "debug.log",
    "docs/generated/g.md",
    "excluded.txt",
    "src/nested/deeper/z.tmp",
    "src/nested/x.tmp",
    "vendor/v.py",
]


def make_tree(root: Path, files: dict[str, str] = FILES) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


@pytest.fixture
def repo(ctx: ToolContext) -> Path:
    make_tree(ctx.workspace)
    return ctx.workspace


def lines_of(out: ToolOutput) -> list[str]:
    return "".join(getattr(p, "text", "") for p in out.content).splitlines()


async def grep_files(ctx: ToolContext, use_rg: bool, **kw: object) -> list[str]:
    params = GrepParams(pattern="needle", **kw)  # type: ignore[arg-type]
    out = await GrepTool(use_ripgrep=use_rg).call(params, ctx)
    assert not out.is_error, lines_of(out)
    lines = lines_of(out)
    return lines[1:] if lines[0].startswith("Found") else []


async def glob_files(ctx: ToolContext, pattern: str, **kw: object) -> list[str]:
    out = await GlobTool().call(GlobParams(pattern=pattern, **kw), ctx)  # type: ignore[arg-type]
    lines = lines_of(out)
    return [] if lines[0].startswith("No files") else sorted(lines)


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_respects_nested_gitignore_negation_ignore_and_exclude(
    ctx: ToolContext, repo: Path, use_rg: bool
) -> None:
    assert await grep_files(ctx, use_rg) == SEARCHED


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_include_ignored_searches_everything_but_the_skip_list(
    ctx: ToolContext, repo: Path, use_rg: bool
) -> None:
    assert await grep_files(ctx, use_rg, include_ignored=True) == sorted(SEARCHED + IGNORED)


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_a_git_ignored_build_copy_is_not_matched_twice(
    ctx: ToolContext, repo: Path, use_rg: bool
) -> None:
    found = await grep_files(ctx, use_rg, glob="**/app.py")
    assert found == ["src/app.py"]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_naming_an_ignored_directory_searches_it(
    ctx: ToolContext, repo: Path, use_rg: bool
) -> None:
    assert await grep_files(ctx, use_rg, path="build") == ["build/app.py", "build/src/app.py"]
    assert await grep_files(ctx, use_rg, path="build/app.py") == ["build/app.py"]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_rules_above_the_search_root_apply(
    ctx: ToolContext, repo: Path, use_rg: bool
) -> None:
    assert await grep_files(ctx, use_rg, path="src") == [
        "src/app.py",
        "src/nested/important.tmp",
        "src/nested/y.py",
    ]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_gitignore_counts_only_in_a_git_repository(ctx: ToolContext, use_rg: bool) -> None:
    make_tree(ctx.workspace, {".gitignore": "*.gen\n", ".ignore": "*.tmp\n", "a.gen": "needle\n"})
    make_tree(ctx.workspace, {"b.tmp": "needle\n", "c.py": "needle\n"})
    assert await grep_files(ctx, use_rg) == ["a.gen", "c.py"]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_workspace_inside_a_repository_gets_the_rules_above_it(
    tmp_path: Path, use_rg: bool
) -> None:
    make_tree(tmp_path / "repo", {".gitignore": "*.gen\n", "ws/a.gen": "needle\n"})
    (tmp_path / "repo" / ".git").mkdir()
    make_tree(tmp_path / "repo" / "ws", {"b.py": "needle\n"})
    ctx = ToolContext(workspace=tmp_path / "repo" / "ws", session_dir=tmp_path / "s")
    assert await grep_files(ctx, use_rg) == ["b.py"]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_rules_above_the_repository_root_do_not_count(tmp_path: Path, use_rg: bool) -> None:
    """A dotfiles repository's `*` in ~/.gitignore must not hide a project below it."""
    make_tree(tmp_path, {".gitignore": "*\n", "proj/a.py": "needle\n"})
    (tmp_path / "proj" / ".git").mkdir()
    ctx = ToolContext(workspace=tmp_path / "proj", session_dir=tmp_path / "s")
    assert await grep_files(ctx, use_rg) == ["a.py"]


async def test_glob_respects_the_same_rules(ctx: ToolContext, repo: Path) -> None:
    everything = sorted(p for p in FILES if not p.startswith((".git/", "node_modules/")))
    listed = [p for p in everything if p not in IGNORED]
    assert await glob_files(ctx, "**/*") == listed
    assert await glob_files(ctx, "**/*", include_ignored=True) == everything
    assert await glob_files(ctx, "**/app.py") == ["src/app.py"]


async def test_glob_naming_an_ignored_directory_lists_it(ctx: ToolContext, repo: Path) -> None:
    assert await glob_files(ctx, "build/**/*.py") == ["build/app.py", "build/src/app.py"]
    assert await glob_files(ctx, "*.py", path="build") == ["build/app.py"]


async def test_malformed_and_unreadable_ignore_files_are_harmless(ctx: ToolContext) -> None:
    make_tree(ctx.workspace, {".ignore": "!\n[\n\\\n*.tmp\n", "a.tmp": "x", "b.py": "x"})
    os.mkfifo(ctx.workspace / ".rgignore")
    (ctx.workspace / "sub").mkdir()
    (ctx.workspace / "sub" / ".ignore").symlink_to("/dev/zero")
    assert await glob_files(ctx, "**/*") == [".ignore", "b.py"]


@pytest.mark.skipif(not HAS_RG, reason="rg not installed")
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"include_ignored": True},
        {"glob": "*.log"},
        {"glob": "*.tmp"},
        {"glob": "src/**"},
        {"path": "build"},
        {"path": "src/nested"},
        {"path": "docs/generated"},
        {"output_mode": "count"},
    ],
    ids=repr,
)
async def test_backends_agree_on_ignore_rules(
    ctx: ToolContext, repo: Path, kw: dict[str, object]
) -> None:
    """ripgrep is the reference; the Python search gives the same answer."""
    make_tree(
        ctx.workspace,
        {
            # The documented "everything except foo/bar" idiom, and a re-included directory.
            "only/.gitignore": "/*\n!/foo\n/foo/*\n!/foo/bar\n",
            "only/a.txt": "needle\n",
            "only/foo/b.txt": "needle\n",
            "only/foo/bar/c.txt": "needle\n",
            "gen/.gitignore": "*\n!*/\n!*.keep\n",
            "gen/a.txt": "needle\n",
            "gen/sub/b.keep": "needle\n",
            "gen/sub/c.txt": "needle\n",
        },
    )
    assert await grep_files(ctx, False, **kw) == await grep_files(ctx, True, **kw)
