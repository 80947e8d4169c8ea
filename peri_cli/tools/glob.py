"""Glob: files whose path matches a pattern, most recently modified first."""

from __future__ import annotations

import asyncio
import functools
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.base.tool import (
    PydanticTool,
    Reads,
    ToolContext,
    ToolKind,
    ToolOutput,
    ToolTraits,
    search_reads,
)
from peri_cli.tools.walk import IGNORED_DIRS, Stopped, display_path, walk

MAX_RESULTS = 1000
# A walk that takes longer than this (a huge tree, a slow disk) returns what it found so far.
DEFAULT_TIMEOUT = 30.0
_MAGIC = frozenset("*?[{")


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob (`**`, `*`, `?`, `[...]`, `{a,b}`) to a full-match regex over `/` paths."""
    return re.compile(_translate(pattern, braces=_balanced(pattern)) + r"\Z", re.DOTALL)


def _balanced(pattern: str) -> bool:
    depth = 0
    for c in pattern:
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return False
    return depth == 0


def _translate(pat: str, *, braces: bool) -> str:
    out: list[str] = []
    i, n, depth = 0, len(pat), 0
    while i < n:
        c = pat[i]
        if c == "*":
            star_end = i + 2 if pat.startswith("**", i) else i + 1
            whole_segment = (i == 0 or pat[i - 1] == "/") and star_end == i + 2
            if whole_segment and pat.startswith("/", star_end):
                out.append("(?:.*/)?")  # `**/`: zero or more directories
                star_end += 1
            elif whole_segment and star_end == n:
                out.append(".*")
            else:
                out.append("[^/]*")
            i = star_end
            continue
        if c == "[":
            close = pat.find("]", i + 2)
            if close != -1:
                body = pat[i + 1 : close].replace("\\", "\\\\").replace("[", "\\[")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = close + 1
                continue
            out.append(re.escape(c))
        elif c == "?":
            out.append("[^/]")
        elif c == "{" and braces:
            out.append("(?:")
            depth += 1
        elif c == "," and depth:
            out.append("|")
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def allowed_ignored(*patterns: str | None) -> frozenset[str]:
    """The ignored directory names a pattern spells out, so the walk enters them after all."""
    segments = {s for p in patterns if p for s in p.split("/")}
    return IGNORED_DIRS & segments


class GlobParams(BaseModel):
    pattern: str = Field(
        description='Glob to match file paths against, e.g. "**/*.py" or "src/**/*.{ts,tsx}".'
    )
    path: str | None = Field(
        default=None,
        description="Directory to search in; defaults to the workspace.",
    )
    include_ignored: bool = Field(
        default=False,
        description="Also list files that .gitignore or .ignore exclude.",
    )


class GlobTool(PydanticTool[GlobParams]):
    name = "Glob"
    kind: ToolKind = "read"
    params = GlobParams
    traits = ToolTraits("search", read_only=True, card_arg="pattern", editor_kind="search")

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """`timeout`: seconds after which the walk stops and returns what it found."""
        self._timeout = timeout

    def description(self) -> str:
        return _description()

    def reads(self, params: GlobParams, ctx: ToolContext) -> Reads:
        return search_reads(ctx, params.path, params.pattern)

    async def call(self, params: GlobParams, ctx: ToolContext) -> ToolOutput:
        # The walk runs in a thread; cancelling the call tells it to stop at the next entry.
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(_glob, params, ctx, cancelled, self._timeout)
        finally:
            cancelled.set()


def _split_static(root: Path, pattern: str) -> tuple[Path, str]:
    """Move the pattern's leading literal directories into the root, so the walk starts lower."""
    if pattern.startswith("/"):
        root, pattern = Path("/"), pattern.lstrip("/")
    segments = pattern.split("/")
    static = 0
    while static < len(segments) - 1 and not (_MAGIC & set(segments[static])):
        static += 1
    return root.joinpath(*segments[:static]), "/".join(segments[static:])


def _matches(root: Path, p: GlobParams, found: list[Path], should_stop: Callable[[], bool]) -> None:
    """Append the files matching the pattern to `found` (partial if the walk is stopped)."""
    base, rest = _split_static(root, p.pattern)
    if not (_MAGIC & set(rest)):
        candidate = base / rest
        if candidate.is_file():
            found.append(candidate)
        return
    if not base.is_dir():
        return
    regex = glob_to_regex(rest)
    # Without `**` (or braces that might hide a `/`) no match lies deeper than the pattern's depth.
    max_depth = None if "**" in rest or "{" in rest else rest.count("/")
    files = walk(
        str(base),
        respect_ignores=not p.include_ignored,
        skip_dirs=IGNORED_DIRS - allowed_ignored(p.pattern),
        want=lambda rel: regex.match(rel) is not None,
        follow_file_links=True,
        max_depth=max_depth,
        should_stop=should_stop,
    )
    found.extend(Path(path) for path, _ in files)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _glob(
    p: GlobParams, ctx: ToolContext, cancelled: threading.Event, timeout: float
) -> ToolOutput:
    root = ctx.resolve(p.path) if p.path else ctx.workspace
    if not root.exists():
        return ToolOutput.error(
            f"Directory not found: {root}. Pass an existing directory as path, or omit it."
        )
    if not root.is_dir():
        return ToolOutput.error(
            f"{root} is a file, not a directory. Use Read to read it, or pass its directory."
        )
    deadline = time.monotonic() + timeout
    found: list[Path] = []
    stopped = False
    try:
        _matches(root, p, found, lambda: cancelled.is_set() or time.monotonic() > deadline)
    except Stopped:
        stopped = True
    except (OSError, re.error) as e:
        return ToolOutput.error(f"Glob failed for pattern {p.pattern!r}: {e}.")
    note = (
        f"(Stopped after {timeout:g} s; these are the matches found so far. Narrow the pattern "
        "or path.)"
    )
    if not found:
        text = f"No files matched {p.pattern!r} in {display_path(root, ctx.workspace)}."
        return ToolOutput.text(f"{text}\n{note}" if stopped else text)
    hidden = 0
    if ctx.read_denied is not None:
        kept = [f for f in found if not ctx.read_denied(f)]
        hidden, found = len(found) - len(kept), kept
    if not found:
        return ToolOutput.text(
            f"No files matched {p.pattern!r} that you may read ({hidden} kept from you by a "
            "Read deny rule or a hidden path)."
        )
    found.sort(key=lambda f: (-_mtime(f), str(f)))
    shown = [display_path(f, ctx.workspace) for f in found[:MAX_RESULTS]]
    if hidden:
        shown.append(
            f"({hidden} more matched but a Read deny rule or a hidden path keeps them from you.)"
        )
    if len(found) > MAX_RESULTS:
        shown.append(
            f"(Showing the {MAX_RESULTS} most recently modified of {len(found)} matches. "
            "Narrow the pattern or path to see the rest.)"
        )
    if stopped:
        shown.append(note)
    return ToolOutput.text("\n".join(shown))
