import os
import stat
from pathlib import Path

from peri_cli.base.tool import ToolContext, ToolOutput
from peri_cli.tools.write import WriteParams, WriteTool


async def write(ctx: ToolContext, file_path: str, content: str) -> ToolOutput:
    return await WriteTool().call(WriteParams(file_path=file_path, content=content), ctx)


def text_of(out: ToolOutput) -> str:
    return "".join(getattr(p, "text", "") for p in out.content)


async def test_creates_file_and_parent_dirs(ctx: ToolContext) -> None:
    out = await write(ctx, "deep/er/new.txt", "hello\nworld\n")
    path = ctx.workspace / "deep/er/new.txt"
    assert not out.is_error
    assert path.read_text() == "hello\nworld\n"
    assert text_of(out).startswith("Created ")
    assert "12 bytes, 2 lines" in text_of(out)


async def test_new_file_mode_follows_umask(ctx: ToolContext) -> None:
    await write(ctx, "f.txt", "x")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((ctx.workspace / "f.txt").stat().st_mode) == 0o666 & ~umask


async def test_overwrite_keeps_mode_and_leaves_no_temp_file(ctx: ToolContext) -> None:
    path = ctx.workspace / "run.sh"
    path.write_text("old\n")
    path.chmod(0o751)
    inode_before = path.stat().st_ino
    out = await write(ctx, "run.sh", "#!/bin/sh\necho new")
    assert text_of(out).startswith("Overwrote ")
    assert "2 lines" in text_of(out)
    assert path.read_text() == "#!/bin/sh\necho new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert sorted(p.name for p in ctx.workspace.iterdir()) == ["run.sh"]


async def test_writes_through_symlink_to_its_target(ctx: ToolContext) -> None:
    target = ctx.workspace / "real.txt"
    target.write_text("old")
    (ctx.workspace / "link.txt").symlink_to(target)
    await write(ctx, "link.txt", "new")
    assert (ctx.workspace / "link.txt").is_symlink()
    assert target.read_text() == "new"


async def test_directory_is_an_error(ctx: ToolContext) -> None:
    (ctx.workspace / "d").mkdir()
    out = await write(ctx, "d", "x")
    assert out.is_error and "directory" in text_of(out)


async def test_parent_that_is_a_file_is_an_error_result(ctx: ToolContext) -> None:
    (ctx.workspace / "file").write_text("x")
    out = await write(ctx, "file/child.txt", "x")
    assert out.is_error and "Cannot write" in text_of(out)


def test_target_paths_are_resolved(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ctx.workspace / "escape").symlink_to(outside)
    tool = WriteTool()
    assert tool.writes(WriteParams(file_path="escape/x.txt", content=""), ctx).paths == (
        outside.resolve() / "x.txt",
    )
    assert tool.writes(WriteParams(file_path="a/../../y.txt", content=""), ctx).paths == (
        tmp_path.resolve() / "y.txt",
    )
