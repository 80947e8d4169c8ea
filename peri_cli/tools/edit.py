"""Edit: replace an exact string in a file, atomically, and show the result around it."""

from __future__ import annotations

import asyncio
import functools
import re
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.base.atomic import atomic_write
from peri_cli.base.safe_read import SafeReadError, read_bytes
from peri_cli.base.tool import (
    FilePort,
    PydanticTool,
    ToolContext,
    ToolKind,
    ToolOutput,
    ToolTraits,
    Writes,
)
from peri_cli.tools.write import count_lines, file_writes, real_path

SNIFF_BYTES = 8192
# Edit loads the whole file; past this (a checkpoint's own limit) it refuses to.
MAX_EDIT_BYTES = 64 << 20
CONTEXT_LINES = 3
MAX_SNIPPET_LINES = 40
MAX_SNIPPET_LINE_CHARS = 500
_IDENTICAL = "old_string and new_string are identical, so there is nothing to do."
_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class EditParams(BaseModel):
    file_path: str = Field(
        description="Path of the file to edit; relative paths are in the workspace."
    )
    old_string: str = Field(
        description="The exact text to replace, including whitespace and indentation."
    )
    new_string: str = Field(
        description="The text to put in its place; must differ from old_string."
    )
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of requiring exactly one."
    )


class EditTool(PydanticTool[EditParams]):
    name = "Edit"
    kind: ToolKind = "write"
    params = EditParams
    traits = ToolTraits("files", card_arg="file_path", editor_kind="edit")

    def description(self) -> str:
        return _description()

    def writes(self, params: EditParams, ctx: ToolContext) -> Writes:
        return file_writes(ctx, params.file_path)

    async def precheck(self, params: EditParams, ctx: ToolContext) -> str | None:
        """The error the edit would end in (old_string not found, not unique, ...), read from
        the file as it is now; None when it would apply."""
        path = real_path(ctx, params.file_path)
        if ctx.files is not None:
            plan = await _plan_through(ctx.files, path, params)
        else:
            plan = await asyncio.to_thread(_plan_on_disk, path, params)
        if isinstance(plan, ToolOutput):
            return "".join(getattr(part, "text", "") for part in plan.content)
        return None

    async def call(self, params: EditParams, ctx: ToolContext) -> ToolOutput:
        p = params
        if ctx.files is not None:
            return await _edit_through(ctx.files, real_path(ctx, p.file_path), p)
        return await asyncio.to_thread(_edit, real_path(ctx, p.file_path), p)


def _edit(path: Path, p: EditParams) -> ToolOutput:
    plan = _plan_on_disk(path, p)
    return plan if isinstance(plan, ToolOutput) else _save(path, *plan)


def _plan_on_disk(path: Path, p: EditParams) -> ToolOutput | _Plan:
    if p.old_string == p.new_string:
        return ToolOutput.error(_IDENTICAL)
    if path.is_dir():
        return ToolOutput.error(f"{path} is a directory, not a file.")
    try:  # a FIFO is never waited for, a device (/dev/zero) never loaded
        data: bytes | None = read_bytes(path, max_bytes=MAX_EDIT_BYTES)
    except SafeReadError as e:
        if not e.missing:
            return ToolOutput.error(f"Cannot edit {e}.")
        data = None
    if data is not None and b"\0" in data[:SNIFF_BYTES]:
        return ToolOutput.error(f"{path} is a binary file; Edit only changes text files.")
    # surrogateescape round-trips bytes that are not UTF-8, so the rest stays intact.
    text = None if data is None else data.decode("utf-8", errors="surrogateescape")
    return _plan(path, text, p)


async def _edit_through(files: FilePort, path: Path, p: EditParams) -> ToolOutput:
    """The same edit on a program's file port (`PeriOptions.files`) instead of the disk."""
    plan = await _plan_through(files, path, p)
    if isinstance(plan, ToolOutput):
        return plan
    updated, summary, snippet_at = plan
    await files.write_text(str(path), updated)
    return _summary(updated, summary, snippet_at)


_Plan = tuple[str, str, "tuple[int, str] | None"]


async def _plan_through(files: FilePort, path: Path, p: EditParams) -> ToolOutput | _Plan:
    try:
        text: str | None = await files.read_text(str(path))
    except FileNotFoundError:
        text = None
    return _plan(path, text, p)


def _plan(path: Path, text: str | None, p: EditParams) -> ToolOutput | _Plan:
    """The file's new text, the summary and where the snippet starts; or why not (`text` None:
    the file does not exist)."""
    old, new = p.old_string, p.new_string
    if old == new:
        return ToolOutput.error(_IDENTICAL)
    if text is None:
        if old == "":
            return new, f"Created {path} ({count_lines(new)} lines).", None
        return ToolOutput.error(
            f"File not found: {path}. Check the path (Glob can find files); "
            "to create a new file use Write."
        )
    if old == "":
        if text:
            return ToolOutput.error(
                f"old_string is empty but {path} already has content. Give the exact text to "
                "replace, or use Write to replace the whole file."
            )
        return new, f"Wrote {path} ({count_lines(new)} lines).", None
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old:
        # The model saw the file through Read, which shows CRLF lines without their \r.
        old, new = _crlf(old), _crlf(new)
        count = text.count(old)
    if count == 0:
        return ToolOutput.error(_not_found_message(path, text, old))
    if count > 1 and not p.replace_all:
        return ToolOutput.error(
            f"old_string occurs {count} times in {path}. Include more surrounding lines to make it "
            "unique, or set replace_all to true to replace every occurrence."
        )
    start = text.index(old)
    updated = text.replace(old, new) if p.replace_all else text.replace(old, new, 1)
    what = "1 occurrence" if count == 1 else f"all {count} occurrences (the first is shown)"
    return updated, f"Edited {path}: replaced {what}.", (start, new)


def _crlf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\n", "\r\n")


def _not_found_message(path: Path, text: str, old: str) -> str:
    hint = "Read the file again and copy the text exactly, including whitespace and indentation."
    squeezed = " ".join(old.split())
    if squeezed and squeezed in " ".join(text.split()):
        hint = (
            "The text exists with different whitespace or indentation; copy it exactly from Read."
        )
    return f"old_string was not found in {path}. {hint}"


def _save(
    path: Path, text: str, summary: str, snippet_at: tuple[int, str] | None = None
) -> ToolOutput:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text.encode("utf-8", errors="surrogateescape"))
    except UnicodeEncodeError:
        return ToolOutput.error("new_string contains invalid Unicode (a lone surrogate).")
    except OSError as e:
        return ToolOutput.error(f"Cannot write {path}: {e.strerror or e}.")
    return _summary(text, summary, snippet_at)


def _summary(text: str, summary: str, snippet_at: tuple[int, str] | None) -> ToolOutput:
    if snippet_at is None:
        return ToolOutput.text(summary)
    return ToolOutput.text(f"{summary}\n{_snippet(text, *snippet_at)}")


def _snippet(text: str, start: int, inserted: str) -> str:
    """Numbered lines around the replacement that begins at `start`."""
    first = text.count("\n", 0, start) + 1
    last = first + inserted.count("\n")
    lines = text.split("\n")
    lo = max(1, first - CONTEXT_LINES)
    hi = min(len(lines), last + CONTEXT_LINES, lo + MAX_SNIPPET_LINES - 1)
    out = []
    for n in range(lo, hi + 1):
        line = lines[n - 1].removesuffix("\r")
        if len(line) > MAX_SNIPPET_LINE_CHARS:
            line = line[:MAX_SNIPPET_LINE_CHARS] + " [… line truncated]"
        out.append(f"{n:>6}\t{line}")
    if hi < last + CONTEXT_LINES and hi < len(lines):
        out.append("   ...\t(snippet cut; Read the file to see the rest)")
    # Lone surrogates (undecodable bytes) cannot be serialized; show them as U+FFFD.
    return _SURROGATE.sub("\ufffd", "\n".join(out))
