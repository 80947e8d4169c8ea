import asyncio
import contextlib
import os
import stat
from pathlib import Path

import pytest

from peri_cli.base.tool import ToolContext, ToolOutput
from peri_cli.tools.edit import EditParams, EditTool


async def edit(ctx: ToolContext, file_path: str, old: str, new: str, **kw: bool) -> ToolOutput:
    params = EditParams(file_path=file_path, old_string=old, new_string=new, **kw)
    return await EditTool().call(params, ctx)


def text_of(out: ToolOutput) -> str:
    return "".join(getattr(p, "text", "") for p in out.content)


@pytest.fixture
def source(ctx: ToolContext) -> Path:
    path = ctx.workspace / "m.py"
    path.write_text("".join(f"line{i} = {i}\n" for i in range(1, 21)))
    return path


async def test_replaces_unique_string_and_shows_numbered_snippet(
    ctx: ToolContext, source: Path
) -> None:
    out = await edit(ctx, "m.py", "line10 = 10\n", "line10 = 'ten'\nextra = True\n")
    assert not out.is_error
    assert "line10 = 'ten'\nextra = True\nline11 = 11\n" in source.read_text()
    text = text_of(out)
    assert "replaced 1 occurrence" in text
    assert "    10\tline10 = 'ten'" in text
    assert "    11\textra = True" in text
    assert "     7\tline7 = 7" in text  # context before
    assert "    14\tline13 = 13" in text  # context after
    assert "line3 = 3" not in text


async def test_not_found_is_an_error(ctx: ToolContext, source: Path) -> None:
    before = source.read_text()
    out = await edit(ctx, "m.py", "nope", "x")
    assert out.is_error and "not found" in text_of(out)
    assert source.read_text() == before


async def test_not_found_hints_at_whitespace(ctx: ToolContext, source: Path) -> None:
    out = await edit(ctx, "m.py", "line1 =  1", "x")
    assert out.is_error and "whitespace" in text_of(out)


async def test_ambiguous_match_reports_count(ctx: ToolContext, source: Path) -> None:
    out = await edit(ctx, "m.py", "line1", "LINE1")  # line1, line10..line19
    assert out.is_error
    assert "11 times" in text_of(out) and "replace_all" in text_of(out)
    assert "LINE1" not in source.read_text()


async def test_replace_all_reports_count(ctx: ToolContext, source: Path) -> None:
    out = await edit(ctx, "m.py", "line1", "LINE1", replace_all=True)
    assert not out.is_error and "all 11 occurrences" in text_of(out)
    text = source.read_text()
    assert text.count("LINE1") == 11 and "line1" not in text


async def test_identical_strings_are_an_error(ctx: ToolContext, source: Path) -> None:
    out = await edit(ctx, "m.py", "line2", "line2")
    assert out.is_error and "identical" in text_of(out)


async def test_missing_file_is_an_error(ctx: ToolContext) -> None:
    out = await edit(ctx, "missing.py", "a", "b")
    assert out.is_error and "not found" in text_of(out)


async def test_empty_old_string_creates_missing_file(ctx: ToolContext) -> None:
    out = await edit(ctx, "pkg/new.py", "", "print('hi')\n")
    assert not out.is_error and "Created" in text_of(out)
    assert (ctx.workspace / "pkg/new.py").read_text() == "print('hi')\n"


async def test_empty_old_string_on_nonempty_file_is_an_error(
    ctx: ToolContext, source: Path
) -> None:
    out = await edit(ctx, "m.py", "", "x")
    assert out.is_error and "Write" in text_of(out)


async def test_keeps_mode_and_leaves_no_temp_file(ctx: ToolContext, source: Path) -> None:
    source.chmod(0o700)
    await edit(ctx, "m.py", "line5 = 5", "line5 = 'five'")
    assert stat.S_IMODE(source.stat().st_mode) == 0o700
    assert [p.name for p in ctx.workspace.iterdir()] == ["m.py"]


async def test_crlf_file_matches_lf_old_string(ctx: ToolContext) -> None:
    path = ctx.workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = await edit(ctx, "win.txt", "one\ntwo", "uno\ndos")
    assert not out.is_error
    assert path.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_undecodable_bytes_survive_an_edit(ctx: ToolContext) -> None:
    path = ctx.workspace / "latin1.txt"
    path.write_bytes(b"caf\xe9\nname = old\n")
    out = await edit(ctx, "latin1.txt", "old", "new")
    assert not out.is_error
    assert path.read_bytes() == b"caf\xe9\nname = new\n"
    assert "\ufffd" in text_of(out)  # shown replaced, written back intact


async def test_binary_file_is_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "b.bin").write_bytes(b"a\0b")
    out = await edit(ctx, "b.bin", "a", "c")
    assert out.is_error and "binary" in text_of(out)


def test_target_paths_are_resolved(ctx: ToolContext) -> None:
    params = EditParams(file_path="sub/../m.py", old_string="a", new_string="b")
    assert EditTool().writes(params, ctx).paths == (ctx.workspace.resolve() / "m.py",)


async def test_issue37_item5_a_fifo_or_device_is_not_read(ctx: ToolContext) -> None:
    """Edit reads its target without waiting for a FIFO's writer or loading a device."""
    fifo = ctx.workspace / "pipe.py"
    os.mkfifo(fifo)
    (ctx.workspace / "zero.py").symlink_to("/dev/zero")
    try:
        out = await asyncio.wait_for(edit(ctx, "pipe.py", "a", "b"), 20)
    finally:  # a reader left waiting (the bug) is let go, so the test's loop can close
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert out.is_error and "FIFO" in text_of(out)
    out = await edit(ctx, "zero.py", "a", "b")
    assert out.is_error and "device" in text_of(out)
