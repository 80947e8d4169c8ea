import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from peri_cli.base.tool import ToolContext, ToolError, ToolOutput
from peri_cli.tools.grep import MAX_FILE_BYTES, GrepParams, GrepTool
from peri_cli.tools.grepcollect import MAX_LINE_CHARS, MAX_LINES

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


# Item 15: Grep never hangs: FIFOs are skipped, the work is bounded, a call can be cancelled.

RUNAWAY = "a" * 40 + "!"  # `(a+)+$` backtracks 2^40 times on it in Python's `re`


async def test_item15_fifo_in_the_tree_is_skipped(tool: GrepTool, ctx: ToolContext) -> None:
    ws = ctx.workspace
    (ws / "a.txt").write_text("needle\n")
    (ws / "sub").mkdir()
    os.mkfifo(ws / "pipe.txt")
    os.mkfifo(ws / "sub" / "pipe.py")
    out = await grep(tool, ctx, "needle", output_mode="content")
    assert lines_of(out) == ["a.txt:1:needle"]


async def test_item15_fifo_as_path_is_an_error(tool: GrepTool, ctx: ToolContext) -> None:
    os.mkfifo(ctx.workspace / "pipe")
    out = await grep(tool, ctx, "needle", path="pipe")
    assert out.is_error and "not a regular file" in lines_of(out)[0]


async def test_item15_hostile_ignore_file_does_not_hang_or_exhaust_memory(
    tool: GrepTool, ctx: ToolContext
) -> None:
    """A committed .gitignore linked to /dev/zero: ripgrep would read it without end."""
    ws = ctx.workspace
    (ws / ".git").mkdir()
    (ws / "sub").mkdir()
    (ws / "sub" / ".gitignore").symlink_to("/dev/zero")
    (ws / "sub" / "a.txt").write_text("needle\n")
    out = await grep(tool, ctx, "needle")
    assert "sub/a.txt" in lines_of(out)


async def test_item15_fifo_ignore_file_is_not_opened(ctx: ToolContext) -> None:
    ws = ctx.workspace
    (ws / "sub").mkdir()
    os.mkfifo(ws / "sub" / ".ignore")
    (ws / "sub" / "a.txt").write_text("needle\n")
    out = await grep(GrepTool(use_ripgrep=False), ctx, "needle")
    assert lines_of(out) == ["Found 1 files", "sub/a.txt"]


async def test_item15_runaway_regex_is_stopped_at_the_deadline(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("found first\n")
    (ctx.workspace / "b.txt").write_text(RUNAWAY + "\n")
    tool = GrepTool(use_ripgrep=False, timeout=1.0)
    out = await grep(tool, ctx, r"(a+)+$|found first", output_mode="content")
    lines = lines_of(out)
    assert lines[0] == "a.txt:1:found first"  # found before the deadline, kept
    assert "Search stopped after 1 s" in lines[-1] and "(a+)+" in lines[-1]


@pytest.mark.skipif(shutil.which("rg") is None, reason="rg not installed")
async def test_item15_ripgrep_is_linear_on_the_runaway_regex(ctx: ToolContext) -> None:
    (ctx.workspace / "b.txt").write_text(RUNAWAY + "\n" + "a" * 40 + "\n")
    out = await grep(GrepTool(use_ripgrep=True), ctx, r"(a+)+$", output_mode="content")
    assert lines_of(out) == ["b.txt:2:" + "a" * 40]


def _search_children() -> list[int]:
    """Pids of this process's children running Grep's Python search."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"grepsearch.py" in cmdline:
            found.append(int(entry.name))
    return found


async def test_item15_cancel_kills_the_python_search(ctx: ToolContext) -> None:
    (ctx.workspace / "b.txt").write_text(RUNAWAY + "\n")
    task = asyncio.create_task(grep(GrepTool(use_ripgrep=False), ctx, r"(a+)+$"))
    deadline = time.monotonic() + 20
    while not (children := _search_children()):
        assert time.monotonic() < deadline and not task.done()
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _search_children() == []
    assert not any(Path(f"/proc/{pid}").exists() for pid in children)


async def test_item15_large_files_are_skipped_by_the_python_search_and_said(
    ctx: ToolContext,
) -> None:
    (ctx.workspace / "small.txt").write_text("needle\n")
    with (ctx.workspace / "huge.txt").open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
        f.seek(0)
        f.write(b"needle\n")
    out = await grep(GrepTool(use_ripgrep=False), ctx, "needle")
    assert lines_of(out) == [
        "Found 1 files",
        "small.txt",
        "[Skipped 1 files larger than 20 MB: huge.txt]",
    ]


async def test_item3_search_processes_get_the_context_environment(
    tool: GrepTool, ctx: ToolContext, tmp_path: Path
) -> None:
    """Grep's child processes start from ToolContext.env, like every child (no provider keys)."""
    marker = tmp_path / "marker"
    startup = tmp_path / "startup.sh"
    startup.write_text(f"echo used > {marker}\n")
    # BASH_ENV is read by the shell that caps rg's memory; PYTHONHOME breaks Python's start.
    env = {"PATH": os.environ["PATH"], "BASH_ENV": str(startup), "PYTHONHOME": "/nonexistent"}
    ctx = ToolContext(workspace=ctx.workspace, session_dir=ctx.session_dir, env=env)
    (ctx.workspace / "a.txt").write_text("needle\n")
    out = await grep(tool, ctx, "needle")
    if tool._rg:
        assert marker.read_text() == "used\n" and lines_of(out) == ["Found 1 files", "a.txt"]
    else:
        assert out.is_error and "The Python search failed" in lines_of(out)[0]


async def test_a_ripgrep_that_cannot_run_is_an_error_not_no_matches(
    ctx: ToolContext, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ripgrep ends 0 (found), 1 (nothing found) or 2 (error); any other end (126, 127: the
    program could not be run, as when a sandbox hid it) says so instead of "No matches"."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    rg = bin_dir / "rg"
    rg.write_text("#!/bin/sh\necho 'rg: cannot execute: No such file or directory' >&2\nexit 127\n")
    rg.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    out = await grep(GrepTool(use_ripgrep=True), ctx, "def main")
    assert out.is_error
    assert lines_of(out) == [
        "ripgrep failed: rg: cannot execute: No such file or directory (exit code 127)."
    ]
