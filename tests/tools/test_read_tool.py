import base64
import os

import pytest

from peri_cli.base.messages import ImagePart, TextPart
from peri_cli.base.tool import ToolContext, ToolError, ToolOutput
from peri_cli.tools.read import MAX_LINE_CHARS, ReadParams, ReadTool

PNG = b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + b"\0" * 40


async def read(ctx: ToolContext, file_path: str, **kw: int) -> ToolOutput:
    return await ReadTool().call(ReadParams(file_path=file_path, **kw), ctx)


def text_of(out: ToolOutput) -> str:
    return "".join(p.text for p in out.content if isinstance(p, TextPart))


async def test_numbers_lines_like_cat_n(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("alpha\nbeta\n\tgamma\n")
    out = await read(ctx, "a.txt")
    assert not out.is_error
    assert text_of(out) == "     1\talpha\n     2\tbeta\n     3\t\tgamma\n"


async def test_absolute_path_and_crlf_and_last_line_without_newline(ctx: ToolContext) -> None:
    path = ctx.workspace / "w.txt"
    path.write_bytes(b"one\r\ntwo")
    out = await read(ctx, str(path))
    assert text_of(out) == "     1\tone\n     2\ttwo\n"


async def test_offset_and_limit_end_with_continuation_note(ctx: ToolContext) -> None:
    (ctx.workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    out = await read(ctx, "n.txt", offset=10, limit=5)
    lines = text_of(out).splitlines()
    assert lines[0] == "    10\tline 10"
    assert lines[4] == "    14\tline 14"
    assert "Showing lines 10-14 of 100" in lines[-1]
    assert "offset=15" in lines[-1]


async def test_no_note_when_everything_is_shown(ctx: ToolContext) -> None:
    (ctx.workspace / "n.txt").write_text("a\nb\nc\n")
    out = await read(ctx, "n.txt", offset=2, limit=2)
    assert text_of(out) == "     2\tb\n     3\tc\n"


async def test_default_limit_is_2000_lines(ctx: ToolContext) -> None:
    (ctx.workspace / "big.txt").write_text("x\n" * 2500)
    out = await read(ctx, "big.txt")
    text = text_of(out)
    assert "  2000\tx\n" in text and "  2001\t" not in text
    assert "of 2500" in text and "offset=2001" in text


async def test_long_lines_are_cut_with_marker(ctx: ToolContext) -> None:
    (ctx.workspace / "min.js").write_text("y" * 50_000 + "\nshort\n")
    text = text_of(await read(ctx, "min.js"))
    first, second = text.splitlines()[:2]
    assert first == "     1\t" + "y" * MAX_LINE_CHARS + " [… line truncated]"
    assert second == "     2\tshort"


async def test_total_output_is_capped_with_continuation(ctx: ToolContext) -> None:
    (ctx.workspace / "wide.txt").write_text(("z" * 1000 + "\n") * 1000)
    text = text_of(await read(ctx, "wide.txt", limit=1000))
    assert len(text) < 300 * 1024
    assert "output size limit reached" in text
    shown = sum(1 for line in text.splitlines() if "\tz" in line)
    assert f"offset={shown + 1}" in text


async def test_binary_file_is_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "blob.bin").write_bytes(b"ELF\0\1\2binary")
    out = await read(ctx, "blob.bin")
    assert out.is_error and "binary" in text_of(out)


async def test_invalid_utf8_is_replaced(ctx: ToolContext) -> None:
    (ctx.workspace / "latin1.txt").write_bytes(b"caf\xe9\n")
    out = await read(ctx, "latin1.txt")
    assert not out.is_error and text_of(out) == "     1\tcaf\ufffd\n"


async def test_png_comes_back_as_image_part(ctx: ToolContext) -> None:
    (ctx.workspace / "pic.png").write_bytes(PNG)
    out = await read(ctx, "pic.png")
    images = [p for p in out.content if isinstance(p, ImagePart)]
    assert not out.is_error and len(images) == 1
    assert images[0].media_type == "image/png"
    assert base64.b64decode(images[0].data) == PNG


@pytest.mark.parametrize(
    ("head", "media_type"),
    [
        (b"\xff\xd8\xff\xe0\0\x10JFIF\0", "image/jpeg"),
        (b"GIF89a\1\0\1\0\0\0", "image/gif"),
        (b"RIFF\x24\0\0\0WEBPVP8 \0", "image/webp"),
    ],
)
async def test_other_image_types(ctx: ToolContext, head: bytes, media_type: str) -> None:
    (ctx.workspace / "img").write_bytes(head)
    out = await read(ctx, "img")
    assert [p.media_type for p in out.content if isinstance(p, ImagePart)] == [media_type]


async def test_huge_image_is_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "huge.png").write_bytes(PNG + b"\0" * (5 * 1024 * 1024))
    out = await read(ctx, "huge.png")
    assert out.is_error and "5 MB" in text_of(out)
    assert not any(isinstance(p, ImagePart) for p in out.content)


async def test_directory_points_to_glob(ctx: ToolContext) -> None:
    (ctx.workspace / "src").mkdir()
    out = await read(ctx, "src")
    assert out.is_error and "directory" in text_of(out) and "Glob" in text_of(out)


async def test_missing_file_suggests_similar_names(ctx: ToolContext) -> None:
    (ctx.workspace / "config.yaml").write_text("a: 1\n")
    out = await read(ctx, "config.yml")
    assert out.is_error
    assert "not found" in text_of(out) and "config.yaml" in text_of(out)


async def test_missing_file_without_similar_names(ctx: ToolContext) -> None:
    out = await read(ctx, "nothing/here.txt")
    assert out.is_error and "not found" in text_of(out)


async def test_empty_file_gets_a_note(ctx: ToolContext) -> None:
    (ctx.workspace / "empty.txt").write_text("")
    out = await read(ctx, "empty.txt")
    assert not out.is_error and "empty" in text_of(out)


async def test_offset_past_end_says_how_many_lines(ctx: ToolContext) -> None:
    (ctx.workspace / "three.txt").write_text("1\n2\n3\n")
    out = await read(ctx, "three.txt", offset=10)
    assert out.is_error and "has 3 lines" in text_of(out)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
async def test_permission_denied_is_an_error_result(ctx: ToolContext) -> None:
    path = ctx.workspace / "secret.txt"
    path.write_text("x\n")
    path.chmod(0)
    out = await read(ctx, "secret.txt")
    assert out.is_error and "Cannot read" in text_of(out)


def test_bad_offset_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="offset"):
        ReadTool().validate({"file_path": "a", "offset": 0})


def test_params_are_the_contract_inputs(ctx: ToolContext) -> None:
    assert set(ReadParams.model_json_schema()["properties"]) == {"file_path", "offset", "limit"}
    assert not ReadTool().writes(ReadParams(file_path="a"), ctx)


async def test_item15_read_of_a_fifo_returns_at_once(ctx: ToolContext) -> None:
    os.mkfifo(ctx.workspace / "pipe")
    (ctx.workspace / "link").symlink_to(ctx.workspace / "pipe")
    for name in ("pipe", "link"):
        out = await read(ctx, name)
        assert out.is_error and "not a regular file" in text_of(out)


async def test_read_of_a_device_returns_at_once(ctx: ToolContext) -> None:
    out = await read(ctx, "/dev/zero")
    assert out.is_error and "not a regular file" in text_of(out)


async def test_a_side_file_that_is_gone_is_named_as_one(ctx: ToolContext) -> None:
    """Issue 37 item 7: a resumed model reading a command's saved output that went with its
    session's data (or was saved on another machine) is told so, not offered look-alikes."""
    outputs = ctx.session_dir / "outputs"
    outputs.mkdir(parents=True)
    (outputs / "0123456789abcdef0123456789abcdee.txt").write_text("a sibling")
    gone = outputs / "0123456789abcdef0123456789abcdef.txt"
    out = await ReadTool().call(ReadParams(file_path=str(gone)), ctx)
    assert out.is_error
    text = out.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"{gone} was the saved output of an earlier command")
    assert "Did you mean" not in text and "Run the command again" in text
    plain = await ReadTool().call(ReadParams(file_path=str(ctx.workspace / "gone.txt")), ctx)
    assert plain.content[0].text.startswith("File not found")  # type: ignore[union-attr]
