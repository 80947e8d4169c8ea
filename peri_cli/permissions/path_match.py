"""Path rules' globs (`Read(./secrets/**)`, `Edit(src/**)`, `Read(~/.ssh/**)`) as regexes over
absolute paths, gitignore-style, and whether one covers a target: allow rules by the resolved
path, deny and ask rules by the path as written too, ignoring case.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from peri_cli.permissions.call_facts import RuleContext, Target


@dataclass(frozen=True)
class _PathPattern:
    sensitive: re.Pattern[str]
    folded: re.Pattern[str]


@functools.lru_cache(maxsize=1024)
def _path_pattern(spec: str, root: str, home: str) -> _PathPattern:
    """A rule's path glob as a regex over absolute paths (gitignore-style: `*` stays within a
    folder, `**` crosses folders, a name without `/` matches at any depth)."""
    if spec.startswith("//"):
        base, rest = "/", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        base, rest = home, spec[2:]
    elif spec.startswith("/"):
        base, rest = root, spec[1:]
    elif spec.startswith("./") or spec == ".":
        base, rest = root, spec[2:]
    else:
        base, rest = root, (spec if "/" in spec.rstrip("/") else "**/" + spec)
    if not rest or rest.endswith("/"):
        rest += "**"
    segments = [s for s in rest.split("/") if s not in ("", ".")]
    k = 0
    while k < len(segments) and not any(c in segments[k] for c in "*?["):
        k += 1
    static = os.path.realpath(os.path.normpath(os.path.join(base, *segments[:k])))
    body = _glob_regex(segments[k:])
    regex = ("" if static == "/" else re.escape(static)) + body
    if not body and static == "/":
        regex = "/"
    return _PathPattern(re.compile(regex, re.DOTALL), re.compile(regex, re.DOTALL | re.I))


def _glob_regex(segments: Sequence[str]) -> str:
    out = ""
    for n, seg in enumerate(segments):
        if seg == "**":
            out += "/.+" if n == len(segments) - 1 else "(?:/[^/]+)*"
        else:
            out += "/" + _segment_regex(seg)
    return out


def _segment_regex(seg: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            while i + 1 < len(seg) and seg[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := seg.find("]", i + 2)) > 0:
            body = seg[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            # A glob's class holds literal characters: a backslash, and `[` (which `re` would
            # read as the start of a nested set, with a FutureWarning), are escaped; so are
            # `&`, `~` and `|`, which `re` reserves for set operations when doubled.
            out.append("[" + re.sub(r"([\\\[&~|])", r"\\\1", body) + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def path_hit(
    spec: str, target: Target, ctx: RuleContext, *, strict: bool, folder: bool = False
) -> bool:
    """Whether a path rule covers a target. Allow (`strict`) looks only at the resolved path,
    case-sensitively; deny and ask also at the path as written, ignoring case. A searched
    `folder` is covered when everything inside it is."""
    pattern = _path_pattern(spec, str(ctx.root), str(ctx.home))
    regex = pattern.sensitive if strict else pattern.folded
    candidates = [target.resolved] if strict else [target.resolved, target.written]
    for path in candidates:
        if regex.fullmatch(path):
            return True
        if folder and regex.fullmatch(path.rstrip("/") + "/\x00"):
            return True
    return False


def glob_escape(path: str) -> str:
    """A path as a glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", path)
