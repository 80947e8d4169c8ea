"""Write: replace or create a whole file, atomically."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import stat
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.core.tools import PydanticTool, ToolContext, ToolKind, ToolOutput, Writes


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


@functools.cache
def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)  # the only portable way to read it is to set it
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes) -> None:
    """Write through a synced temp file in the same directory, so no reader sees a partial file.

    An existing file keeps its permission bits; a new one gets the usual 0o666 minus the umask.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable; not possible everywhere
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


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

    def description(self) -> str:
        return _description()

    def writes(self, params: WriteParams, ctx: ToolContext) -> Writes:
        return Writes((real_path(ctx, params.file_path),))

    async def call(self, params: WriteParams, ctx: ToolContext) -> ToolOutput:
        p = params
        return await asyncio.to_thread(_write, real_path(ctx, p.file_path), p.content)


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
