"""Write: replace or create a whole file, atomically."""

from __future__ import annotations

import asyncio
import functools
import os
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.base.atomic import atomic_write
from peri_cli.base.tool import (
    FilePort,
    PydanticTool,
    ToolContext,
    ToolKind,
    ToolOutput,
    ToolTraits,
    Writes,
)


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


def real_path(ctx: ToolContext, file_path: str) -> Path:
    """The file a model-given path really names: absolute, with `..` and symlinks resolved."""
    path = ctx.resolve(file_path)
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop; the write itself will then fail and say so
        return Path(os.path.abspath(path))


def file_writes(ctx: ToolContext, file_path: str) -> Writes:
    """One file written: where it really lands, and the path as the model named it."""
    given = (ctx.resolve(file_path),) if file_path else ()
    return Writes((real_path(ctx, file_path),), given=given)


def count_lines(text: str) -> int:
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


class WriteParams(BaseModel):
    file_path: str = Field(
        description="Path of the file to write; relative paths are in the workspace."
    )
    content: str = Field(description="The complete new content of the file.")


class WriteTool(PydanticTool[WriteParams]):
    name = "Write"
    kind: ToolKind = "write"
    params = WriteParams
    traits = ToolTraits("files", card_arg="file_path", editor_kind="edit")

    def description(self) -> str:
        return _description()

    def writes(self, params: WriteParams, ctx: ToolContext) -> Writes:
        return file_writes(ctx, params.file_path)

    async def call(self, params: WriteParams, ctx: ToolContext) -> ToolOutput:
        p = params
        if ctx.files is not None:
            return await _write_through(ctx.files, real_path(ctx, p.file_path), p.content)
        return await asyncio.to_thread(_write, real_path(ctx, p.file_path), p.content)


async def _write_through(files: FilePort, path: Path, content: str) -> ToolOutput:
    """The same write on a program's file port (`PeriOptions.files`) instead of the disk."""
    try:
        await files.read_text(str(path))
        existed = True
    except FileNotFoundError:
        existed = False
    await files.write_text(str(path), content)
    verb = "Overwrote" if existed else "Created"
    size = len(content.encode("utf-8", errors="surrogatepass"))
    return ToolOutput.text(f"{verb} {path} ({size} bytes, {count_lines(content)} lines).")


def _write(path: Path, content: str) -> ToolOutput:
    if path.is_dir():
        return ToolOutput.error(f"{path} is a directory; give the path of a file inside it.")
    existed = path.exists()
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        return ToolOutput.error("content contains invalid Unicode (a lone surrogate); fix it.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    except OSError as e:
        return ToolOutput.error(f"Cannot write {path}: {e.strerror or e}.")
    verb = "Overwrote" if existed else "Created"
    return ToolOutput.text(f"{verb} {path} ({len(data)} bytes, {count_lines(content)} lines).")
