"""Glob: files whose path matches a pattern, most recently modified first."""

from __future__ import annotations

import asyncio
import functools
import os
import re
from pathlib import Path

from pydantic import BaseModel, Field

from peri_cli.core.tools import PydanticTool, ToolContext, ToolKind, ToolOutput

# Directories nobody means to search; walked only when the pattern (or glob) names them.
IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
MAX_RESULTS = 1000
_MAGIC = frozenset("*?[{")


@functools.cache
def _description() -> str:
    return Path(__file__).with_suffix(".md").read_text(encoding="utf-8")


def display_path(path: Path | str, workspace: Path) -> str:
    """`path` relative to the workspace when inside it, else absolute; lexical, no symlinks."""
    norm = os.path.normpath(path)
    rel = os.path.relpath(norm, os.path.normpath(workspace))
    return norm if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


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


class GlobTool(PydanticTool[GlobParams]):
    name = "Glob"
    kind: ToolKind = "read"
    params = GlobParams

    def description(self) -> str:
        return _description()

    async def call(self, params: GlobParams, ctx: ToolContext) -> ToolOutput:
        p = params
        return await asyncio.to_thread(_glob, p, ctx)


def _split_static(root: Path, pattern: str) -> tuple[Path, str]:
    """Move the pattern's leading literal directories into the root, so the walk starts lower."""
    if pattern.startswith("/"):
        root, pattern = Path("/"), pattern.lstrip("/")
    segments = pattern.split("/")
    static = 0
    while static < len(segments) - 1 and not (_MAGIC & set(segments[static])):
        static += 1
    return root.joinpath(*segments[:static]), "/".join(segments[static:])


def _matches(root: Path, pattern: str) -> list[Path]:
    base, rest = _split_static(root, pattern)
    if not (_MAGIC & set(rest)):
        candidate = base / rest
        return [candidate] if candidate.is_file() else []
    if not base.is_dir():
        return []
    regex = glob_to_regex(rest)
    # Without `**` (or braces that might hide a `/`) no match lies deeper than the pattern's depth.
    max_depth = None if "**" in rest or "{" in rest else rest.count("/")
    allowed = allowed_ignored(pattern)
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = os.path.relpath(dirpath, base)
        depth = 0 if rel_dir == os.curdir else rel_dir.count(os.sep) + 1
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS or d in allowed]
        if max_depth is not None and depth >= max_depth:
            dirnames[:] = []
        prefix = "" if depth == 0 else rel_dir.replace(os.sep, "/") + "/"
        found.extend(Path(dirpath, f) for f in filenames if regex.match(prefix + f))
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _glob(p: GlobParams, ctx: ToolContext) -> ToolOutput:
    root = ctx.resolve(p.path) if p.path else ctx.workspace
    if not root.exists():
        return ToolOutput.error(
            f"Directory not found: {root}. Pass an existing directory as path, or omit it."
        )
    if not root.is_dir():
        return ToolOutput.error(
            f"{root} is a file, not a directory. Use Read to read it, or pass its directory."
        )
    try:
        found = _matches(root, p.pattern)
    except (OSError, re.error) as e:
        return ToolOutput.error(f"Glob failed for pattern {p.pattern!r}: {e}.")
    if not found:
        return ToolOutput.text(
            f"No files matched {p.pattern!r} in {display_path(root, ctx.workspace)}."
        )
    found.sort(key=lambda f: (-_mtime(f), str(f)))
    shown = [display_path(f, ctx.workspace) for f in found[:MAX_RESULTS]]
    if len(found) > MAX_RESULTS:
        shown.append(
            f"(Showing the {MAX_RESULTS} most recently modified of {len(found)} matches. "
            "Narrow the pattern or path to see the rest.)"
        )
    return ToolOutput.text("\n".join(shown))
