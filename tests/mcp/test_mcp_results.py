"""Tool results from servers: kinds of content, isError, and the 25k-token cap with a side file."""

from __future__ import annotations

import base64
from pathlib import Path

import mcp_types as t

from peri_cli.base.messages import ImagePart, TextPart
from peri_cli.context.tokens import default_counter
from peri_cli.mcp.results import MAX_RESULT_TOKENS, to_output

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()


def convert(result: t.CallToolResult, session_dir: Path):  # type: ignore[no-untyped-def]
    return to_output(result, tool="mcp__s__t", session_dir=session_dir, counter=default_counter())


def test_text_and_error(tmp_path: Path) -> None:
    ok = convert(
        t.CallToolResult(content=[t.TextContent(text="a"), t.TextContent(text="b")]), tmp_path
    )
    assert ok.content == [TextPart(text="a\nb")] and not ok.is_error
    bad = convert(t.CallToolResult(content=[t.TextContent(text="boom")], is_error=True), tmp_path)
    assert bad.is_error and bad.content == [TextPart(text="boom")]


def test_other_content(tmp_path: Path) -> None:
    result = t.CallToolResult(
        content=[
            t.ImageContent(data=PNG, mime_type="image/png"),
            t.ImageContent(data="not base64!", mime_type="image/png"),
            t.ImageContent(data=PNG, mime_type="image/tiff"),
            t.AudioContent(data=PNG, mime_type="audio/wav"),
            t.ResourceLink(name="doc", uri="file:///tmp/doc.md"),
            t.EmbeddedResource(resource=t.TextResourceContents(uri="mem://a", text="inner")),
            t.EmbeddedResource(resource=t.BlobResourceContents(uri="mem://b", blob=PNG)),
        ]
    )
    out = convert(result, tmp_path)
    text, image = out.content
    assert image == ImagePart(media_type="image/png", data=PNG)
    assert isinstance(text, TextPart)
    assert text.text.splitlines() == [
        "[an image returned by the tool was not valid base64; not shown]",
        "[image (image/tiff) returned by the tool; this type cannot be shown]",
        "[audio (audio/wav) returned by the tool; not shown]",
        "[resource: doc <file:///tmp/doc.md>]",
        "[resource mem://a]",
        "inner",
        "[resource mem://b (binary); binary content not shown]",
    ]


def test_structured_only_and_empty(tmp_path: Path) -> None:
    structured = convert(t.CallToolResult(content=[], structured_content={"n": 1}), tmp_path)
    assert structured.content == [TextPart(text='{\n  "n": 1\n}')]
    empty = convert(t.CallToolResult(content=[]), tmp_path)
    assert empty.content == [TextPart(text="(the tool returned no content)")]


def test_a_big_result_is_cut_and_saved_whole(tmp_path: Path) -> None:
    whole = "".join(f"line {i} of a very long result\n" for i in range(40_000))
    out = convert(t.CallToolResult(content=[t.TextContent(text=whole)]), tmp_path)
    (part,) = out.content
    assert isinstance(part, TextPart)
    assert default_counter().count_text(part.text) <= MAX_RESULT_TOKENS + 200
    assert whole.startswith(part.text.split("\n\n[mcp__s__t: the result was cut here")[0])
    (side,) = (tmp_path / "outputs").iterdir()
    assert side.read_text() == whole
    assert f"The whole result is in {side}; Read it" in part.text
    assert "over the 25000-token limit" in part.text


def test_a_result_under_the_limit_is_untouched(tmp_path: Path) -> None:
    text = "word " * 20_000  # more characters than the limit, fewer tokens
    out = convert(t.CallToolResult(content=[t.TextContent(text=text)]), tmp_path)
    assert out.content == [TextPart(text=text)]
    assert not (tmp_path / "outputs").exists()


def test_no_place_for_the_side_file(tmp_path: Path) -> None:
    blocked = tmp_path / "session"
    blocked.write_text("a file where the session folder should be")
    out = convert(t.CallToolResult(content=[t.TextContent(text="ab " * 60_000)]), blocked)
    (part,) = out.content
    assert isinstance(part, TextPart) and "The whole result could not be saved" in part.text


def test_lone_surrogates_are_scrubbed(tmp_path: Path) -> None:
    out = convert(t.CallToolResult(content=[t.TextContent(text="a\ud800b")]), tmp_path)
    assert out.content == [TextPart(text="a\ufffdb")]
