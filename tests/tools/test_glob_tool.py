import os
from pathlib import Path

import pytest

from peri_cli.base.tool import ToolContext, ToolOutput
from peri_cli.tools.glob import MAX_RESULTS, GlobParams, GlobTool, glob_to_regex


async def glob(ctx: ToolContext, pattern: str, path: str | None = None) -> ToolOutput:
    return await GlobTool().call(GlobParams(pattern=pattern, path=path), ctx)


def lines_of(out: ToolOutput) -> list[str]:
    return "".join(getattr(p, "text", "") for p in out.content).splitlines()


def touch(root: Path, rel: str, mtime: float = 1_000_000.0) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rel)
    os.utime(path, (mtime, mtime))
    return path


async def test_recursive_pattern_sorted_newest_first(ctx: ToolContext) -> None:
    ws = ctx.workspace
    touch(ws, "old.py", 1_000)
    touch(ws, "pkg/newest.py", 3_000)
    touch(ws, "pkg/sub/middle.py", 2_000)
    touch(ws, "pkg/notes.md", 4_000)
    assert lines_of(await glob(ctx, "**/*.py")) == ["pkg/newest.py", "pkg/sub/middle.py", "old.py"]


async def test_single_star_stays_in_one_directory(ctx: ToolContext) -> None:
    touch(ctx.workspace, "top.py")
    touch(ctx.workspace, "pkg/inner.py")
    assert lines_of(await glob(ctx, "*.py")) == ["top.py"]
    assert lines_of(await glob(ctx, "pkg/*.py")) == ["pkg/inner.py"]


async def test_ignored_dirs_are_skipped_unless_named(ctx: ToolContext) -> None:
    ws = ctx.workspace
    touch(ws, "src/app.js")
    for ignored in ("node_modules/lib/index.js", ".git/hooks/x.js", ".venv/bin/y.js"):
        touch(ws, ignored)
    assert lines_of(await glob(ctx, "**/*.js")) == ["src/app.js"]
    assert lines_of(await glob(ctx, "node_modules/**/*.js")) == ["node_modules/lib/index.js"]
    assert lines_of(await glob(ctx, "**/node_modules/**/*.js")) == ["node_modules/lib/index.js"]


async def test_pycache_is_skipped(ctx: ToolContext) -> None:
    touch(ctx.workspace, "a.py")
    touch(ctx.workspace, "__pycache__/a.cpython-311.pyc")
    assert lines_of(await glob(ctx, "**/*")) == ["a.py"]


async def test_braces_and_classes(ctx: ToolContext) -> None:
    for name in ("a.ts", "b.tsx", "c.js", "d1.txt", "dx.txt"):
        touch(ctx.workspace, f"web/{name}")
    assert sorted(lines_of(await glob(ctx, "web/*.{ts,tsx}"))) == ["web/a.ts", "web/b.tsx"]
    assert lines_of(await glob(ctx, "web/d[0-9].txt")) == ["web/d1.txt"]


async def test_path_argument_and_outside_workspace(ctx: ToolContext, tmp_path: Path) -> None:
    touch(ctx.workspace, "sub/x.py")
    assert lines_of(await glob(ctx, "*.py", path="sub")) == ["sub/x.py"]
    outside = tmp_path / "elsewhere"
    touch(outside, "y.py")
    assert lines_of(await glob(ctx, "*.py", path=str(outside))) == [str(outside / "y.py")]


async def test_literal_pattern(ctx: ToolContext) -> None:
    touch(ctx.workspace, "src/main.py")
    assert lines_of(await glob(ctx, "src/main.py")) == ["src/main.py"]


async def test_cap_with_note(ctx: ToolContext) -> None:
    for i in range(MAX_RESULTS + 5):
        (ctx.workspace / f"f{i}.txt").touch()
    lines = lines_of(await glob(ctx, "*.txt"))
    assert len(lines) == MAX_RESULTS + 1
    assert f"of {MAX_RESULTS + 5} matches" in lines[-1]


async def test_no_match_is_not_an_error(ctx: ToolContext) -> None:
    out = await glob(ctx, "**/*.rs")
    assert not out.is_error and "No files matched" in lines_of(out)[0]


async def test_bad_path_is_an_error(ctx: ToolContext) -> None:
    touch(ctx.workspace, "file.txt")
    assert (await glob(ctx, "*", path="missing")).is_error
    assert (await glob(ctx, "*", path="file.txt")).is_error


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("**", "x/y", True),
        ("*.py", "x/a.py", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("[!a]b", "cb", True),
        ("[!a]b", "ab", False),
        ("{a,b/c}.md", "b/c.md", True),
        ("{a.md", "{a.md", True),
    ],
)
def test_glob_to_regex(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_to_regex(pattern).match(path)) is matches


async def test_item15_fifos_and_devices_are_not_listed(ctx: ToolContext) -> None:
    touch(ctx.workspace, "a.txt")
    os.mkfifo(ctx.workspace / "pipe.txt")
    (ctx.workspace / "zero.txt").symlink_to("/dev/zero")
    (ctx.workspace / "link.txt").symlink_to(ctx.workspace / "a.txt")
    assert sorted(lines_of(await glob(ctx, "*.txt"))) == ["a.txt", "link.txt"]


async def test_a_walk_past_its_deadline_returns_what_it_found(ctx: ToolContext) -> None:
    touch(ctx.workspace, "a.py")
    out = await GlobTool(timeout=0).call(GlobParams(pattern="**/*.py"), ctx)
    assert lines_of(out)[-1].startswith("(Stopped after 0 s")
