"""Read: a text file as numbered lines, or an image as an image part."""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import os
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, Field

from peri_cli.base.images import MAX_IMAGE_BYTES, image_type
from peri_cli.base.messages import ImagePart, TextPart
from peri_cli.base.tool import (
    FilePort,
    PydanticTool,
    Reads,
    ToolContext,
    ToolKind,
    ToolOutput,
    ToolTraits,
)
from peri_cli.tools.sidefile import gone_note
from peri_cli.tools.walk import open_regular

MAX_LINE_CHARS = 2000
MAX_OUTPUT_BYTES = 256 * 1024
SNIFF_BYTES = 8192
# Read at most this much of one line; the rest of an overlong (minified) line is skipped unread.
_LINE_READ_CAP = MAX_LINE_CHARS * 4 + 1
_TRUNCATED = " [… line truncated]"


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class ReadParams(BaseModel):
    file_path: str = Field(
        description="Path of the file to read; relative paths are in the workspace."
    )
    offset: int = Field(default=1, ge=1, description="1-based line number to start reading at.")
    limit: int = Field(default=2000, ge=1, description="Maximum number of lines to read.")


class ReadTool(PydanticTool[ReadParams]):
    name = "Read"
    kind: ToolKind = "read"
    params = ReadParams
    traits = ToolTraits("files", read_only=True, card_arg="file_path", editor_kind="read")

    def description(self) -> str:
        return _description()

    def reads(self, params: ReadParams, ctx: ToolContext) -> Reads:
        return Reads((ctx.resolve(params.file_path),)) if params.file_path else Reads()

    async def call(self, params: ReadParams, ctx: ToolContext) -> ToolOutput:
        p = params
        if ctx.files is not None:
            return await _read_through(ctx.files, ctx.resolve(p.file_path), p.offset, p.limit)
        return await asyncio.to_thread(read_file, ctx.resolve(p.file_path), p.offset, p.limit)


async def _read_through(files: FilePort, path: Path, offset: int, limit: int) -> ToolOutput:
    """The file as a program's file port (`PeriOptions.files`) gives it, numbered as usual."""
    try:
        text = await files.read_text(str(path))
    except FileNotFoundError:
        gone = gone_note(path)
        return ToolOutput.error(gone or f"File not found: {path}. Use Glob to find the file.")
    data = io.BytesIO(text.encode("utf-8", errors="replace"))
    return _numbered_lines(data, path, offset, limit)


def read_file(path: Path, offset: int = 1, limit: int = 2000) -> ToolOutput:
    """The Read tool's result for `path`, with every failure as an error output."""
    if path.is_dir():
        return ToolOutput.error(
            f"{path} is a directory, not a file. Use Glob to find files in it, or Bash `ls`."
        )
    if not path.exists():
        return ToolOutput.error(_not_found(path))
    # Opened without blocking and checked on the descriptor: a FIFO (even one swapped in after
    # the checks above) never makes Read wait for a writer.
    try:
        fd = open_regular(str(path)) if path.is_file() else None
        if fd is None:
            return ToolOutput.error(f"{path} is not a regular file (a device, socket or pipe).")
        with os.fdopen(fd, "rb") as f:
            head = f.read(SNIFF_BYTES)
            media_type = image_type(head)
            if media_type:
                return _image(f, path, media_type)
            if b"\0" in head:
                return ToolOutput.error(
                    f"{path} looks like a binary file (it contains NUL bytes), so it was not read. "
                    "Inspect it with Bash (e.g. `file`, `xxd | head`) if you need to."
                )
            f.seek(0)
            return _numbered_lines(f, path, offset, limit)
    except OSError as e:
        return ToolOutput.error(f"Cannot read {path}: {e.strerror or e}.")


def _not_found(path: Path) -> str:
    if (gone := gone_note(path)) is not None:
        return gone
    parent = path.parent
    if not parent.is_dir():
        return f"File not found: {path} (its directory {parent} does not exist either). Use Glob."
    try:
        names = os.listdir(parent)
    except OSError:
        names = []
    import difflib  # a missing file is the only user: not imported at start

    similar = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    similar += [n for n in names if n not in similar and Path(n).stem == path.stem][:2]
    if similar:
        return f"File not found: {path}. Did you mean: {', '.join(similar)}?"
    return f"File not found: {path}. Use Glob to find the file."


def _image(f: BinaryIO, path: Path, media_type: str) -> ToolOutput:
    size = os.fstat(f.fileno()).st_size
    if size > MAX_IMAGE_BYTES:
        return ToolOutput.error(
            f"{path} is a {size / 2**20:.1f} MB image; the limit is {MAX_IMAGE_BYTES // 2**20} MB. "
            "Make a smaller copy with Bash (e.g. ImageMagick `convert -resize`) and read that."
        )
    f.seek(0)
    data = base64.b64encode(f.read()).decode("ascii")
    return ToolOutput(
        [
            TextPart(text=f"Image {path} ({media_type}, {size} bytes):"),
            ImagePart(media_type=media_type, data=data),
        ]
    )


def _next_line(f: BinaryIO) -> tuple[bytes, bool] | None:
    """The next line (its first bytes if overlong) and whether it was cut; None at the end."""
    raw = f.readline(_LINE_READ_CAP)
    if not raw:
        return None
    if raw.endswith(b"\n") or len(raw) < _LINE_READ_CAP:
        return raw, False
    while (more := f.readline(1 << 16)) and not more.endswith(b"\n"):
        pass
    return raw, True


def _count_lines(f: BinaryIO) -> int:
    """Lines from the current position to the end, a last unterminated one included."""
    count, last = 0, b"\n"
    while chunk := f.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _render(raw: bytes, cut: bool) -> str:
    text = raw.decode("utf-8", errors="replace").removesuffix("\n").removesuffix("\r")
    if cut or len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS] + _TRUNCATED
    return text


def _numbered_lines(f: BinaryIO, path: Path, offset: int, limit: int) -> ToolOutput:
    out: list[str] = []
    size = 0
    lineno = 0
    size_capped = False
    while (item := _next_line(f)) is not None:
        lineno += 1
        if lineno < offset:
            continue
        entry = f"{lineno:>6}\t{_render(*item)}\n"
        if lineno >= offset + limit or (out and size + len(entry) > MAX_OUTPUT_BYTES):
            size_capped = lineno < offset + limit
            lineno += _count_lines(f)
            break
        out.append(entry)
        size += len(entry)
    total = lineno
    if total == 0:
        return ToolOutput.text(f"(The file {path} is empty.)")
    if offset > total:
        return ToolOutput.error(
            f"Offset {offset} is past the end of {path}, which has {total} lines. "
            f"Use an offset from 1 to {total}."
        )
    last = offset + len(out) - 1
    text = "".join(out)
    if last < total:
        why = " (output size limit reached)" if size_capped else ""
        text += (
            f"\n(Showing lines {offset}-{last} of {total}{why}. "
            f"To read more, call Read with offset={last + 1}.)"
        )
    return ToolOutput.text(text)
