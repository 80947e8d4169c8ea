"""A directory walk that skips what ripgrep skips by default, for Glob and Grep's Python search.

Ignore files as ripgrep reads them: `.gitignore` (inside a git repository, up to its root) and
`.git/info/exclude`, `.ignore` and `.rgignore` anywhere; in the walked tree and in the directories
above it. `.rgignore` beats `.ignore` beats `.gitignore` beats `exclude`; among files of one kind
the deepest wins; in a file the last matching line wins and `!` re-includes. Patterns are compiled
by the maintained `pathspec` package and judged per entry, so the walk's root is never skipped
(naming an ignored directory searches it). Hidden files are walked, symlinked directories are
not followed, and only regular files are yielded: a FIFO or a device is never opened, not even
an ignore file that is one.

Grep's search process loads this file by its path, so it imports nothing from Peri.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

# Directories nobody means to search; walked only when a pattern or path names them.
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
# Ignore files are read up to this size; a larger one counts with its first part only.
MAX_IGNORE_FILE_BYTES = 1 << 20
_SPECIAL = frozenset({".git", ".gitignore", ".ignore", ".rgignore"})


class Stopped(Exception):
    """The walk was told to stop (cancelled, or past its deadline)."""


def display_path(path: os.PathLike[str] | str, workspace: os.PathLike[str] | str) -> str:
    """`path` relative to the workspace when inside it, else absolute; lexical, no symlinks."""
    norm = os.path.normpath(path)
    rel = os.path.relpath(norm, os.path.normpath(workspace))
    return norm if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def open_regular(path: str) -> int | None:
    """A read-only descriptor for `path` if it is a regular file, None for anything else;
    OSError when it cannot be opened.

    O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer, and the
    check is made on the open descriptor, so a file swapped for a FIFO meanwhile is caught too.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def read_regular(path: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of a regular file; None for anything else or when unreadable."""
    try:
        fd = open_regular(path)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read(limit)
    except (OSError, ValueError):
        return None


# pathspec names a group in its regexes; a combined regex must not repeat a name.
_NAMED_GROUP = re.compile(r"(?<!\\)\(\?P<[^>]+>")
# pathspec's regexes for patterns without a slash start so: they match at any depth.
_AT_ANY_DEPTH = "^(?:.+/)?"
_SLASHLESS = re.compile(r"\(\?P<[^>]+>/\)|\[\^/\]")


class _Spec:
    """One ignore file's patterns.

    pathspec's regexes are searched in a path and mark with a group where a matched directory
    ends: what follows lies inside it. Here a match must end where the path ends, so that it is
    the path that matches, not a directory above it: a walk judges each entry on its own, as
    git and ripgrep do, and never skips its root. The few regexes without the group (`*`: any
    path, `dir/**`: any path below `dir/`) match the paths they apply to.

    The patterns are combined, the last one first, into one regex whose first matching
    alternative is the pattern that decides. Patterns without a slash (`*.log`, `build/`, most
    of them) are matched against the entry's name alone, which is much faster.
    """

    def __init__(self, patterns: list[tuple[str, bool]]) -> None:
        """`patterns`: (pathspec regex, True to ignore or False to keep), in file order."""
        self._ignores = [ignore for _, ignore in patterns]
        by_name: list[tuple[int, str]] = []
        by_path: list[tuple[int, str]] = []
        for i, (regex, _) in enumerate(patterns):
            body = _NAMED_GROUP.sub("(?:", regex)
            tail = regex[len(_AT_ANY_DEPTH) :]
            if regex.startswith(_AT_ANY_DEPTH) and "/" not in _SLASHLESS.sub("", tail):
                by_name.append((i, body[len(_AT_ANY_DEPTH) :]))
                continue
            start = "" if body.startswith("^") else "(?s:.*?)"
            # Without the group the regex matches a prefix; `dir/**` (`^dir/`) only below dir.
            end = "" if "(?P<" in regex else "(?s:.+)" if regex.endswith("/") else "(?s:.*)"
            by_path.append((i, f"{start}(?:{body}){end}"))
        self._by_name = _combined(by_name)
        self._by_path = _combined(by_path)

    def decide(self, rel: str) -> bool | None:
        """True when the pattern deciding for `rel` ignores it, False when it keeps it (`!`),
        None when no pattern matches. A directory's `rel` ends with `/`."""
        found = -1
        if self._by_name is not None:
            name = rel[rel.rfind("/", 0, len(rel) - 1) + 1 :]
            found = _last_match(self._by_name, name)
        if self._by_path is not None:
            found = max(found, _last_match(self._by_path, rel))
        return None if found < 0 else self._ignores[found]


def _combined(alternatives: list[tuple[int, str]]) -> re.Pattern[str] | None:
    if not alternatives:
        return None
    return re.compile("|".join(f"(?P<p{i}>{body})" for i, body in reversed(alternatives)))


def _last_match(regex: re.Pattern[str], text: str) -> int:
    """The index of the last pattern matching `text` in full, or -1."""
    match = regex.fullmatch(text)
    if match is None or match.lastgroup is None:
        return -1
    return int(match.lastgroup[1:])


def _patterns(path: str) -> _Spec | None:
    """The patterns of one ignore file; lines pathspec rejects are skipped, as git skips them."""
    data = read_regular(path, MAX_IGNORE_FILE_BYTES)
    if not data:
        return None
    from pathspec import GitIgnoreSpec  # only a walk that meets an ignore file needs it

    patterns: list[tuple[str, bool]] = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            spec = GitIgnoreSpec.from_lines([line])
        except ValueError:
            continue
        for pattern in spec.patterns:
            regex = pattern.regex
            if pattern.include is not None and isinstance(regex, re.Pattern):
                patterns.append((regex.pattern, bool(pattern.include)))
    if not patterns:
        return None
    try:
        return _Spec(patterns)
    except re.error:  # a pattern pathspec compiled but this combination cannot hold
        return None


def _decide(spec: _Spec | None, rel: str) -> bool | None:
    return None if spec is None else spec.decide(rel)


@dataclass(frozen=True)
class _Rules:
    """The ignore files of one directory."""

    prefix: str  # the directory's path with a trailing separator
    has_git: bool
    rgignore: _Spec | None
    ignore: _Spec | None
    gitignore: _Spec | None
    exclude: _Spec | None


def _load(directory: str, names: Collection[str]) -> _Rules | None:
    """The rules of `directory`, given which of the special names it holds; None if none."""
    if not (_SPECIAL & set(names)):
        return None

    def patterns(name: str) -> _Spec | None:
        return _patterns(os.path.join(directory, name)) if name in names else None

    has_git = ".git" in names
    exclude = None
    if has_git and os.path.isdir(os.path.join(directory, ".git")):
        exclude = _patterns(os.path.join(directory, ".git", "info", "exclude"))
    prefix = directory if directory.endswith(os.sep) else directory + os.sep
    return _Rules(
        prefix, has_git, patterns(".rgignore"), patterns(".ignore"), patterns(".gitignore"), exclude
    )


# Rules from the nearest directory to the farthest.
Chain = tuple[_Rules, ...]


def is_ignored(chain: Chain, path: str, is_dir: bool) -> bool:
    """Whether the rules in `chain` ignore `path` (a directory when `is_dir`) itself."""
    suffix = "/" if is_dir else ""

    def rel(rules: _Rules) -> str:
        return path[len(rules.prefix) :].replace(os.sep, "/") + suffix

    for kind in ("rgignore", "ignore"):
        for rules in chain:
            found = _decide(getattr(rules, kind), rel(rules))
            if found is not None:
                return found
    if not any(rules.has_git for rules in chain):
        return False  # .gitignore counts only inside a git repository
    for kind in ("gitignore", "exclude"):
        for rules in chain:
            found = _decide(getattr(rules, kind), rel(rules))
            if found is not None:
                return found
            if rules.has_git:
                break  # not above the repository's root
    return False


def root_chain(root: str) -> Chain:
    """The rules of the directories above `root`, nearest first. They apply to what lies below
    `root`, not to `root` itself: a walk never skips its own root."""
    chain: list[_Rules] = []
    current = root
    while (parent := os.path.dirname(current)) != current:
        current = parent
        names = [n for n in _SPECIAL if os.path.lexists(os.path.join(current, n))]
        rules = _load(current, names)
        if rules is not None:
            chain.append(rules)
    return tuple(chain)


Select = Callable[[str, str], bool]


def walk(
    root: str,
    *,
    respect_ignores: bool = True,
    skip_dirs: Collection[str] = IGNORED_DIRS,
    select: Select | None = None,
    want: Callable[[str], bool] | None = None,
    follow_file_links: bool = False,
    max_depth: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[str, str]]:
    """(path, path relative to `root` with `/`) of each regular file, in sorted path order.

    `select(rel, name)` acts like ripgrep's `--glob`: a file it accepts is yielded even if
    ignored, one it rejects is skipped; a directory it accepts is walked even if ignored.
    `want(rel)` is a plain filter on files, applied first (it saves judging the others).
    `follow_file_links` yields symlinks to regular files too (directory links are never followed).
    `max_depth` 0 yields only files directly in `root`. Raises Stopped once `should_stop()`.
    """
    root = os.path.normpath(root)
    chain = root_chain(root) if respect_ignores else ()
    # A stack of directory listings (sorted), so deep trees need no recursion.
    stack: list[tuple[Iterator[os.DirEntry[str]], str, Chain, int]] = []
    _push(stack, root, rel_dir="", chain=chain, depth=0, respect_ignores=respect_ignores)
    while stack:
        entries, rel_dir, chain, depth = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if should_stop():
            raise Stopped
        rel = rel_dir + entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if entry.name in skip_dirs or (max_depth is not None and depth >= max_depth):
                continue
            chosen = select is not None and select(rel, entry.name)
            if not chosen and chain and is_ignored(chain, entry.path, is_dir=True):
                continue
            _push(
                stack,
                entry.path,
                rel_dir=rel + "/",
                chain=chain,
                depth=depth + 1,
                respect_ignores=respect_ignores,
            )
            continue
        if _takes_file(entry, rel, chain, want, select, follow_links=follow_file_links):
            yield entry.path, rel


def _takes_file(
    entry: os.DirEntry[str],
    rel: str,
    chain: Chain,
    want: Callable[[str], bool] | None,
    select: Select | None,
    *,
    follow_links: bool,
) -> bool:
    """Whether `walk` yields this file: wanted, regular, and chosen by `select` or not ignored."""
    if want is not None and not want(rel):
        return False
    if not _is_regular(entry, follow_links):
        return False
    if select is not None:
        return select(rel, entry.name)
    return not (chain and is_ignored(chain, entry.path, is_dir=False))


def _push(
    stack: list[tuple[Iterator[os.DirEntry[str]], str, Chain, int]],
    directory: str,
    *,
    rel_dir: str,
    chain: Chain,
    depth: int,
    respect_ignores: bool,
) -> None:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    if respect_ignores:
        rules = _load(directory, [e.name for e in entries if e.name in _SPECIAL])
        if rules is not None:
            chain = (rules, *chain)
    stack.append((iter(entries), rel_dir, chain, depth))


def _is_regular(entry: os.DirEntry[str], follow_links: bool) -> bool:
    try:
        if entry.is_symlink():
            return follow_links and entry.is_file(follow_symlinks=True)
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False
