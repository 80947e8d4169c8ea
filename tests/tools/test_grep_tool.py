import shutil
from pathlib import Path

import pytest

from peri_cli.core.tools import ToolContext, ToolError, ToolOutput
from peri_cli.tools.grep import MAX_LINE_CHARS, MAX_LINES, GrepParams, GrepTool

BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(
        True,
        id="ripgrep",
        marks=pytest.mark.skipif(shutil.which("rg") is None, reason="rg not installed"),
    ),
]


@pytest.fixture(params=BACKENDS)
def tool(request: pytest.FixtureRequest) -> GrepTool:
    return GrepTool(use_ripgrep=request.param)


@pytest.fixture
def tree(ctx: ToolContext) -> Path:
    ws = ctx.workspace
    files = {
        "a.py": "import os\ndef main():\n    return os.getcwd()\n",
        "pkg/b.py": "def helper():\n    pass\n\ndef main():\n    helper()\n",
        "pkg/c.txt": "main course\n",
        "node_modules/lib/d.py": "def main(): ...\n",
        ".venv/lib/e.py": "def main(): ...\n",
        ".hidden.py": "def main_hidden(): ...\n",
        "win.py": "def main():\r\n    pass\r\n",
    }
    for rel, content in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode())
    (ws / "blob.bin").write_bytes(b"def main\0\1\2")
    return ws


async def grep(tool: GrepTool, ctx: ToolContext, pattern: str, **kw: str) -> ToolOutput:
    return await tool.call(GrepParams(pattern=pattern, **kw), ctx)  # type: ignore[arg-type]


def lines_of(out: ToolOutput) -> list[str]:
    return "".join(getattr(p, "text", "") for p in out.content).splitlines()


async def test_files_with_matches_sorted_by_path(
    tool: GrepTool, ctx: ToolContext, tree: Path
) -> None:
    out = await grep(tool, ctx, r"def main")
    assert not out.is_error
    assert lines_of(out) == ["Found 4 files", ".hidden.py", "a.py", "pkg/b.py", "win.py"]


async def test_content_mode_prints_path_line_text(
    tool: GrepTool, ctx: ToolContext, tree: Path
) -> None:
    out = await grep(tool, ctx, r"main\(\):$", output_mode="content")
    assert lines_of(out) == ["a.py:2:def main():", "pkg/b.py:4:def main():", "win.py:1:def main():"]


async def test_count_mode(tool: GrepTool, ctx: ToolContext, tree: Path) -> None:
    out = await grep(tool, ctx, r"helper|main", output_mode="count", glob="*.py")
    assert lines_of(out) == [".hidden.py:1", "a.py:1", "pkg/b.py:3", "win.py:1"]


async def test_glob_and_path_narrow_the_search(
    tool: GrepTool, ctx: ToolContext, tree: Path
) -> None:
    assert lines_of(await grep(tool, ctx, "main", glob="*.txt")) == ["Found 1 files", "pkg/c.txt"]
    assert lines_of(await grep(tool, ctx, "main", path="pkg")) == [
        "Found 2 files",
        "pkg/b.py",
        "pkg/c.txt",
    ]
    assert lines_of(await grep(tool, ctx, "main", glob="pkg/*.{txt,md}")) == [
        "Found 1 files",
        "pkg/c.txt",
    ]


async def test_single_file_path(tool: GrepTool, ctx: ToolContext, tree: Path) -> None:
    out = await grep(tool, ctx, "pass", path="pkg/b.py", output_mode="content")
    assert lines_of(out) == ["pkg/b.py:2:    pass"]


async def test_ignored_dir_searched_when_named(
    tool: GrepTool, ctx: ToolContext, tree: Path
) -> None:
    out = await grep(tool, ctx, "def main", path="node_modules")
    assert lines_of(out) == ["Found 1 files", "node_modules/lib/d.py"]


async def test_case_insensitive_inline_flag(tool: GrepTool, ctx: ToolContext, tree: Path) -> None:
    out = await grep(tool, ctx, "(?i)MAIN COURSE")
    assert lines_of(out) == ["Found 1 files", "pkg/c.txt"]


async def test_outside_workspace_paths_are_absolute(
    tool: GrepTool, ctx: ToolContext, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("needle\n")
    out = await grep(tool, ctx, "needle", path=str(other), output_mode="content")
    assert lines_of(out) == [f"{other}/x.txt:1:needle"]


async def test_no_match_is_not_an_error(tool: GrepTool, ctx: ToolContext, tree: Path) -> None:
    out = await grep(tool, ctx, "zzz_not_there")
    assert not out.is_error and lines_of(out)[0].startswith("No matches")


async def test_invalid_regex_is_an_error_result(
    tool: GrepTool, ctx: ToolContext, tree: Path
) -> None:
    out = await grep(tool, ctx, "a[")
    assert out.is_error
    assert "Invalid regex" in lines_of(out)[0]


async def test_missing_path_is_an_error_result(tool: GrepTool, ctx: ToolContext) -> None:
    out = await grep(tool, ctx, "x", path="nope")
    assert out.is_error and "not found" in lines_of(out)[0]


async def test_output_is_capped_with_note(tool: GrepTool, ctx: ToolContext) -> None:
    (ctx.workspace / "many.txt").write_text("hit\n" * (MAX_LINES + 50))
    out = await grep(tool, ctx, "hit", output_mode="content")
    lines = lines_of(out)
    assert len(lines) == MAX_LINES + 1
    assert f"of {MAX_LINES + 50} matching lines" in lines[-1]


async def test_long_lines_are_cut(tool: GrepTool, ctx: ToolContext) -> None:
    (ctx.workspace / "min.js").write_text("x" * 100_000 + "needle\n")
    out = await grep(tool, ctx, "needle", output_mode="content")
    (line,) = lines_of(out)
    assert line == "min.js:1:" + ("x" * 100_000)[: MAX_LINE_CHARS - 9] + " [… line truncated]"


@pytest.mark.skipif(shutil.which("rg") is None, reason="rg not installed")
async def test_backends_agree(ctx: ToolContext, tree: Path) -> None:
    (ctx.workspace / "a").mkdir()
    (ctx.workspace / "a" / "x.py").write_text("def main(): pass\n")
    (ctx.workspace / "a-b.py").write_text("def main(): pass\n")
    for mode in ("files_with_matches", "content", "count"):
        results = [
            lines_of(await grep(GrepTool(use_ripgrep=rg), ctx, "main|helper", output_mode=mode))
            for rg in (True, False)
        ]
        assert results[0] == results[1], mode


def test_unknown_flags_are_rejected_so_the_model_can_fix_them() -> None:
    with pytest.raises(ToolError, match="-i"):
        GrepTool(use_ripgrep=False).validate({"pattern": "x", "-i": True})
