"""Grep: search file contents for a regex, with ripgrep when present and Python `re` otherwise."""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from peri_cli.core.tools import PydanticTool, ToolContext, ToolKind, ToolOutput
from peri_cli.tools.glob import IGNORED_DIRS, allowed_ignored, display_path, glob_to_regex

OutputMode = Literal["files_with_matches", "content", "count"]

MAX_LINES = 1000
MAX_CHARS = 40_000
MAX_LINE_CHARS = 500
SNIFF_BYTES = 8192


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


class GrepParams(BaseModel):
    # Models trained on other agents send flags like `-i` or `-C`; ignoring them silently would
    # give wrong results, so unknown inputs are an error the model can correct.
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="Regular expression matched against each line; prefix (?i) to ignore case."
    )
    path: str | None = Field(
        default=None, description="File or directory to search; defaults to the workspace."
    )
    glob: str | None = Field(
        default=None,
        description='Only search files matching this glob, e.g. "*.py" or "src/**/*.{ts,tsx}".',
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description='"files_with_matches" (default): paths of matching files; '
        '"content": matching lines as path:line:text; "count": path:number of matching lines.',
    )


class _Collector:
    """Keeps the first output lines, up to the caps, and counts all of them."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.total = 0
        self._chars = 0
        self._full = False

    def add(self, line: str) -> None:
        self.total += 1
        if self._full:
            return
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [… line truncated]"
        if len(self.lines) >= MAX_LINES or self._chars + len(line) > MAX_CHARS:
            self._full = True
            return
        self.lines.append(line)
        self._chars += len(line) + 1


class GrepTool(PydanticTool[GrepParams]):
    name = "Grep"
    kind: ToolKind = "read"
    params = GrepParams

    def __init__(self, *, use_ripgrep: bool | None = None) -> None:
        """`use_ripgrep`: None uses `rg` when it is on PATH; False forces the Python search."""
        rg = shutil.which("rg") if use_ripgrep is not False else None
        if use_ripgrep and rg is None:
            raise ValueError("use_ripgrep=True but rg is not on PATH")
        self._rg = rg

    def description(self) -> str:
        return _description()

    async def call(self, params: GrepParams, ctx: ToolContext) -> ToolOutput:
        p = params
        root = Path(os.path.normpath(ctx.resolve(p.path))) if p.path else ctx.workspace
        if not root.exists():
            return ToolOutput.error(f"Path not found: {root}. Pass an existing file or directory.")
        collector = _Collector()
        if self._rg:
            failure = await _ripgrep(self._rg, p, root, ctx.workspace, collector)
        else:
            failure = await asyncio.to_thread(_python_grep, p, root, ctx.workspace, collector)
        if failure:
            return ToolOutput.error(failure)
        return ToolOutput.text(_report(p, root, ctx.workspace, collector))


def _report(p: GrepParams, root: Path, workspace: Path, collector: _Collector) -> str:
    if not collector.total:
        return f"No matches for {p.pattern!r} in {display_path(root, workspace)}."
    unit = "matching lines" if p.output_mode == "content" else "files"
    text = "\n".join(collector.lines)
    if p.output_mode == "files_with_matches":
        text = f"Found {collector.total} files\n{text}"
    if len(collector.lines) < collector.total:
        text += (
            f"\n(Showing {len(collector.lines)} of {collector.total} {unit}. Narrow the search "
            "with path, glob or a more specific pattern.)"
        )
    return text


def _invalid_regex(pattern: str, detail: str) -> str:
    return (
        f"Invalid regex {pattern!r}: {detail}. Fix the pattern; escape characters meant "
        "literally, e.g. \\( \\[ \\{ \\. \\*."
    )


async def _ripgrep(
    rg: str, p: GrepParams, root: Path, workspace: Path, collector: _Collector
) -> str | None:
    """Run rg, feed its lines to the collector; an error message on failure, else None."""
    target = display_path(root, workspace)
    mode_flags = {
        "files_with_matches": ["--files-with-matches"],
        "count": ["--count", "--with-filename"],
        "content": ["--line-number", "--with-filename", "--no-heading"],
    }[p.output_mode]
    # No .gitignore handling and hidden files included, so results match the Python search.
    args = [rg, "--no-config", "--color=never", "--no-messages", "--hidden", "--no-ignore"]
    args += ["--sort=path", "--crlf", "--engine=auto", *mode_flags]
    # Bound line length (minified files); the preview is cut further, like the Python search's.
    args += [f"--max-columns={MAX_LINE_CHARS * 8}", "--max-columns-preview"]
    for name in sorted(IGNORED_DIRS - allowed_ignored(p.glob, p.path)):
        args += ["--glob", f"!{name}"]
    if p.glob:
        args += ["--glob", p.glob]
    args += ["--regexp", p.pattern, "--", target]
    try:
        proc = await asyncio.create_subprocess_exec(
            *args,
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            limit=1 << 20,
        )
    except OSError as e:
        return f"Could not run ripgrep: {e.strerror or e}."
    assert proc.stdout is not None and proc.stderr is not None
    strip_dot = target == os.curdir
    stderr_task = asyncio.create_task(proc.stderr.read())
    try:
        async for raw in proc.stdout:
            line = raw.decode("utf-8", errors="replace").removesuffix("\n").removesuffix("\r")
            collector.add(line.removeprefix("./") if strip_dot else line)
        stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
        returncode = await proc.wait()
    finally:
        stderr_task.cancel()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if returncode == 2 and not collector.total:
        if "regex" in stderr:
            return _invalid_regex(p.pattern, stderr)
        return f"ripgrep failed: {stderr or f'exit code {returncode}'}."
    return None


def _python_grep(p: GrepParams, root: Path, workspace: Path, collector: _Collector) -> str | None:
    try:
        regex = re.compile(p.pattern)
    except re.error as e:
        return _invalid_regex(p.pattern, str(e))
    for path in _candidates(root, p.glob, allowed_ignored(p.glob, p.path)):
        shown = display_path(path, workspace)
        count = 0
        for number, line in _text_lines(path):
            if not regex.search(line):
                continue
            count += 1
            if p.output_mode == "files_with_matches":
                break
            if p.output_mode == "content":
                collector.add(f"{shown}:{number}:{line}")
        if count and p.output_mode == "files_with_matches":
            collector.add(shown)
        elif count and p.output_mode == "count":
            collector.add(f"{shown}:{count}")
    return None


def _candidates(root: Path, glob: str | None, allowed: frozenset[str]) -> list[Path]:
    """Files to search, in ripgrep's --sort=path order; an explicit file ignores the glob."""
    if not root.is_dir():
        return [root]
    regex = glob_to_regex(glob) if glob else None
    by_name = glob is not None and "/" not in glob.strip("/")
    found: list[tuple[tuple[str, ...], Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS or d in allowed]
        rel_dir = os.path.relpath(dirpath, root)
        prefix = "" if rel_dir == os.curdir else rel_dir.replace(os.sep, "/") + "/"
        for name in filenames:
            path = Path(dirpath, name)
            if path.is_symlink():
                continue  # ripgrep does not follow symlinks either
            if regex and not regex.match(name if by_name else prefix + name):
                continue
            found.append((tuple((prefix + name).split("/")), path))
    found.sort(key=lambda item: item[0])
    return [path for _, path in found]


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered lines without terminators; nothing for binary or unreadable files."""
    try:
        with path.open("rb") as f:
            if b"\0" in f.read(SNIFF_BYTES):
                return
            f.seek(0)
            for number, raw in enumerate(f, 1):
                text = raw.decode("utf-8", errors="replace")
                yield number, text.removesuffix("\n").removesuffix("\r")
    except OSError:
        return
