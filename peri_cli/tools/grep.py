"""Grep: search file contents for a regex, with ripgrep when present and Python `re` otherwise.

Both searches skip what ripgrep skips by default (ignore files, non-regular files) and are bounded:
a deadline stops them, cancelling the call kills them. ripgrep's engine is linear in the input; the
Python search runs in a child process (grepsearch.py), since `re` can take exponential time and
cannot be interrupted inside a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from peri_cli.base import programs
from peri_cli.base.tool import (
    PydanticTool,
    Reads,
    ToolContext,
    ToolKind,
    ToolOutput,
    ToolTraits,
    search_reads,
)
from peri_cli.tools.bashsandbox import finish_after, helper_launch
from peri_cli.tools.glob import allowed_ignored, glob_to_regex
from peri_cli.tools.grepcollect import MAX_LINE_CHARS, Collector
from peri_cli.tools.sidefile import gone_note
from peri_cli.tools.walk import IGNORED_DIRS, display_path

OutputMode = Literal["files_with_matches", "content", "count"]

# A search still running after this many seconds is stopped; what it found is returned.
DEFAULT_TIMEOUT = 30.0
# The Python search skips larger files (ripgrep, being fast and streaming, reads every size).
MAX_FILE_BYTES = 20 * 1024 * 1024
# ripgrep's address space, in KiB: an ignore file linked to /dev/zero would make it read forever.
RG_MEMORY_KIB = 1024 * 1024
_SEARCH_SCRIPT = Path(__file__).with_name("grepsearch.py")


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
    include_ignored: bool = Field(
        default=False,
        description="Also search files that .gitignore or .ignore exclude.",
    )


@dataclass
class _Search:
    """One search's bounds and what it has to say besides its results."""

    deadline: float
    timeout: float
    notes: list[str] = field(default_factory=list)

    def remaining(self) -> float:
        return max(0.0, self.deadline - asyncio.get_running_loop().time())

    def stopped(self, hint: str) -> None:
        self.notes.append(
            f"[Search stopped after {self.timeout:g} s; the results above are partial. Narrow "
            f"it with path or glob{hint}.]"
        )


class GrepTool(PydanticTool[GrepParams]):
    name = "Grep"
    kind: ToolKind = "read"
    params = GrepParams
    traits = ToolTraits("search", read_only=True, card_arg="pattern", editor_kind="search")

    def __init__(
        self, *, use_ripgrep: bool | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        """`use_ripgrep`: None uses `rg` when it is on PATH; False forces the Python search.
        `timeout`: seconds after which a search is stopped and its partial results returned."""
        rg = programs.find("rg") if use_ripgrep is not False else None  # (not a planted one)
        if use_ripgrep and rg is None:
            raise ValueError("use_ripgrep=True but rg is not on PATH")
        self._rg = rg
        self._bash = programs.find("bash")
        self._timeout = timeout

    def description(self) -> str:
        return _description()

    def reads(self, params: GrepParams, ctx: ToolContext) -> Reads:
        return search_reads(ctx, params.path, params.glob)

    async def call(self, params: GrepParams, ctx: ToolContext) -> ToolOutput:
        p = params
        root = Path(os.path.normpath(ctx.resolve(p.path))) if p.path else ctx.workspace
        try:
            mode = root.stat().st_mode
        except (OSError, ValueError):
            gone = gone_note(root)
            return ToolOutput.error(
                gone or f"Path not found: {root}. Pass an existing file or directory."
            )
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            return ToolOutput.error(
                f"{root} is not a regular file or directory (a FIFO, socket or device), so it "
                "was not searched."
            )
        collector = Collector(_readable_lines(p.output_mode, ctx))
        search = _Search(asyncio.get_running_loop().time() + self._timeout, self._timeout)
        if self._rg:
            failure = await self._ripgrep(p, root, ctx, collector, search)
        else:
            failure = await _python_search(p, root, ctx, collector, search)
        if failure:
            return ToolOutput.error(failure)
        if collector.hidden:
            search.notes.append(
                f"[{collector.hidden} more results are in files a Read deny rule or a hidden "
                "path keeps from you.]"
            )
        return ToolOutput.text(_report(p, root, ctx.workspace, collector, search.notes))

    async def _ripgrep(
        self,
        p: GrepParams,
        root: Path,
        ctx: ToolContext,
        collector: Collector,
        search: _Search,
    ) -> str | None:
        """Run rg, feed its lines to the collector; an error message on failure, else None."""
        assert self._rg is not None
        args = _rg_args(self._rg, p, root, ctx.workspace)
        if self._bash:  # cap its memory; `ulimit -v` fails harmlessly where it is not enforced
            script = f'ulimit -v {RG_MEMORY_KIB} 2>/dev/null; exec "$0" "$@"'
            args = [self._bash, "-c", script, *args]
        launch = helper_launch(args, ctx)
        try:
            proc = await asyncio.create_subprocess_exec(
                *launch.argv,
                cwd=ctx.workspace,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                limit=1 << 20,
            )
        except OSError as e:
            launch.finish()
            return f"Could not run ripgrep: {e.strerror or e}."
        finish_after(proc, launch)
        assert proc.stdout is not None and proc.stderr is not None
        strip_dot = display_path(root, ctx.workspace) == os.curdir
        stderr_task = asyncio.create_task(proc.stderr.read())
        try:
            async with asyncio.timeout(search.remaining()):
                async for raw in proc.stdout:
                    line = raw.decode("utf-8", errors="replace").removesuffix("\n")
                    line = line.removesuffix("\r")
                    collector.add(line.removeprefix("./") if strip_dot else line)
                stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
                returncode = await proc.wait()
        except TimeoutError:
            search.stopped("")
            return None
        finally:
            stderr_task.cancel()
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if returncode < 0:  # killed: its memory cap, most likely; the Python search is bounded
            search.notes.append(
                f"[ripgrep was killed by signal {-returncode}; the Python search ran instead.]"
            )
            collector.reset()
            return await _python_search(p, root, ctx, collector, search)
        if returncode not in (0, 1) and not collector.total:  # 2: its error; else not run
            if returncode == 2 and "regex" in stderr:
                return _invalid_regex(p.pattern, stderr)
            return f"ripgrep failed: {stderr or 'no message'} (exit code {returncode})."
        return None


def _rg_args(rg: str, p: GrepParams, root: Path, workspace: Path) -> list[str]:
    mode_flags = {
        "files_with_matches": ["--files-with-matches"],
        "count": ["--count", "--with-filename"],
        "content": ["--line-number", "--with-filename", "--no-heading"],
    }[p.output_mode]
    # Hidden files are searched. Ignore files are read as by default, except the user's global
    # git excludes, which the Python search cannot know either.
    ignores = ["--no-ignore"] if p.include_ignored else ["--no-ignore-global"]
    args = [rg, "--no-config", "--color=never", "--no-messages", "--hidden", *ignores]
    args += ["--sort=path", "--crlf", "--engine=auto", *mode_flags]
    # Bound line length (minified files); the preview is cut further, like the Python search's.
    args += [f"--max-columns={MAX_LINE_CHARS * 8}", "--max-columns-preview"]
    for name in sorted(IGNORED_DIRS - allowed_ignored(p.glob, p.path)):
        args += ["--glob", f"!{name}"]
    if p.glob:
        args += ["--glob", p.glob]
    return [*args, "--regexp", p.pattern, "--", display_path(root, workspace)]


_CONTENT_LINE = re.compile(r"(.*?):\d+:")


def _readable_lines(mode: str, ctx: ToolContext) -> Callable[[str], bool] | None:
    """A filter dropping output lines about files a Read deny rule hides (None: no such rule)."""
    denied = ctx.read_denied
    if denied is None:
        return None

    def keep(line: str) -> bool:
        if mode == "content":
            found = _CONTENT_LINE.match(line)
            shown = found.group(1) if found else line
        elif mode == "count":
            shown = line.rpartition(":")[0] or line
        else:
            shown = line
        return not denied(ctx.resolve(shown))

    return keep


def _report(
    p: GrepParams, root: Path, workspace: Path, collector: Collector, notes: list[str]
) -> str:
    if not collector.total:
        text = f"No matches for {p.pattern!r} in {display_path(root, workspace)}."
        return "\n".join([text, *notes])
    unit = "matching lines" if p.output_mode == "content" else "files"
    text = "\n".join(collector.lines)
    if p.output_mode == "files_with_matches":
        text = f"Found {collector.total} files\n{text}"
    if len(collector.lines) < collector.total:
        text += (
            f"\n(Showing {len(collector.lines)} of {collector.total} {unit}. Narrow the search "
            "with path, glob or a more specific pattern.)"
        )
    return "\n".join([text, *notes])


def _invalid_regex(pattern: str, detail: str) -> str:
    return (
        f"Invalid regex {pattern!r}: {detail}. Fix the pattern; escape characters meant "
        "literally, e.g. \\( \\[ \\{ \\. \\*."
    )


async def _python_search(
    p: GrepParams, root: Path, ctx: ToolContext, collector: Collector, search: _Search
) -> str | None:
    """The search in a child process (grepsearch.py), killed at the deadline or on cancel."""
    try:
        re.compile(p.pattern)
    except re.error as e:
        return _invalid_regex(p.pattern, str(e))
    except RecursionError:
        return _invalid_regex(p.pattern, "too deeply nested")
    launch = helper_launch([sys.executable, "-P", str(_SEARCH_SCRIPT)], ctx)
    try:
        proc = await asyncio.create_subprocess_exec(
            *launch.argv,
            cwd=ctx.workspace,
            env=launch.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            limit=1 << 20,
        )
    except OSError as e:
        launch.finish()
        return f"Could not start the Python search: {e.strerror or e}."
    finish_after(proc, launch)
    too_big: list[str] = []
    request = _search_request(p, root, ctx)
    returncode, stderr = await _exchange(proc, request, collector, too_big, search)
    if too_big:
        shown = ", ".join(too_big[:5]) + (", …" if len(too_big) > 5 else "")
        search.notes.append(
            f"[Skipped {len(too_big)} files larger than {MAX_FILE_BYTES // 2**20} MB: {shown}]"
        )
    if returncode and not collector.total:
        last = stderr.splitlines()[-1] if stderr else f"exit code {returncode}"
        return f"The Python search failed: {last}"
    return None


def _search_request(p: GrepParams, root: Path, ctx: ToolContext) -> dict[str, Any]:
    """What the child process (grepsearch.py) reads on stdin: the search, fully decided."""
    return {
        "pattern": p.pattern,
        "mode": p.output_mode,
        "root": str(root),
        "workspace": str(ctx.workspace),
        "select": glob_to_regex(p.glob).pattern if p.glob else None,
        "select_by_name": p.glob is not None and "/" not in p.glob.strip("/"),
        "skip_dirs": sorted(IGNORED_DIRS - allowed_ignored(p.glob, p.path)),
        "respect_ignores": not p.include_ignored,
        "max_file_bytes": MAX_FILE_BYTES,
        "max_line_chars": MAX_LINE_CHARS,
    }


async def _exchange(
    proc: asyncio.subprocess.Process,
    request: dict[str, Any],
    collector: Collector,
    too_big: list[str],
    search: _Search,
) -> tuple[int, str]:
    """Send the request, collect the child's lines until it ends or the deadline passes (then
    it is killed), and return its exit code and stderr."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.create_task(proc.stderr.read())
    try:
        async with asyncio.timeout(search.remaining()):
            proc.stdin.write(json.dumps(request).encode())
            await proc.stdin.drain()
            proc.stdin.close()
            async for raw in proc.stdout:
                item = json.loads(raw)
                if "out" in item:
                    collector.add(item["out"])
                elif "big" in item:
                    too_big.append(item["big"])
            stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
            returncode = await proc.wait()
    except TimeoutError:
        search.stopped(
            ", or simplify the pattern: without ripgrep, Python's regex engine searches, and "
            "nested repetition such as (a+)+ can take it exponential time"
        )
        returncode, stderr = 0, ""
    except (BrokenPipeError, ConnectionResetError, ValueError) as e:
        returncode, stderr = 1, f"{type(e).__name__}: {e}"
    finally:
        stderr_task.cancel()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    return returncode, stderr
