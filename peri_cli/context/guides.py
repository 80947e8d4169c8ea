"""Project guide discovery (AGENTS.md, CLAUDE.md, .claude/AGENTS.md) and `@import` expansion.

The rules are PRODUCT.md §3: the working directory only (no parent walk), the first existing
candidate wins, `CLAUDE.local.md` is appended, only `CLAUDE*` guides expand imports (at most 3
levels), and the combined text is cut to a byte budget with a visible note. Nothing here raises on a
bad file: problems become warnings for the caller to show.

Project guides are repository files: they, their imports and the project's `guides.extra_paths`
must resolve inside the workspace after symlinks. One outside is left unread (an import stays as
written) and listed in `GuideResult.outside`, for the trust question; only a trusted workspace reads
it (`allow_outside`). User-level guides and the user's extra paths may live anywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from peri_cli.base.safe_read import SafeReadError, is_inside, read_text
from peri_cli.base.textsafe import visible

MAX_IMPORT_DEPTH = 3
DEFAULT_BUDGET_BYTES = 40_000
MAX_GUIDE_FILE_BYTES = 1 << 20  # per file; the combined text is cut to the budget anyway
# All the imports of one guide together: a guide importing one big file ten thousand times (or a
# diamond three levels deep) must not read gigabytes only to be cut to the budget.
MAX_IMPORTED_CHARS = 4 << 20

PROJECT_CANDIDATES = ("AGENTS.md", "CLAUDE.md", ".claude/AGENTS.md")
USER_GUIDE = ".claude/AGENTS.md"
LOCAL_GUIDE = "CLAUDE.local.md"

# `<!-- @import path -->`; the path runs to the closing `-->`, so it may contain spaces.
IMPORT_RE = re.compile(r"<!--[ \t]*@import[ \t]+(?P<path>[^\n]*?)[ \t]*-->")


class GuideReadError(Exception):
    """A guide file that cannot be used; `missing` tells "not there" from "there but unusable"."""

    def __init__(self, reason: str, *, missing: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.missing = missing


@dataclass(frozen=True)
class OutsidePath:
    """A project guide path or import that resolves outside the workspace, left unread."""

    written: str  # as the file or setting wrote it
    resolved: Path
    source: str  # who names it: the importing guide (for a guide file or extra path: itself)
    kind: Literal["guide", "extra_path", "import"] = "import"

    def describe(self) -> str:
        return f"{self.written} -> {self.resolved}"


@dataclass(frozen=True)
class Expansion:
    """Expanded text, the files pulled in (in order), the problems met, the imports not read
    because they lead outside the workspace."""

    text: str
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    outside: list[OutsidePath] = field(default_factory=list)


@dataclass(frozen=True)
class GuideResult:
    """The combined guide text for the frozen prompt, every file it came from, what went wrong,
    and the project paths left unread because they resolve outside the workspace."""

    text: str
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    outside: list[OutsidePath] = field(default_factory=list)


def read_guide_file(path: Path) -> str:
    """Read a guide as UTF-8 text; GuideReadError for a missing, unreadable, special (a FIFO, a
    device), oversized or binary file."""
    try:
        return read_text(path, max_bytes=MAX_GUIDE_FILE_BYTES)
    except SafeReadError as e:
        reason = e.reason
        if e.problem == "not_text" and not reason.startswith("binary"):
            reason = f"binary file ({reason})"
        raise GuideReadError(reason, missing=e.missing) from e


def expand_imports(
    text: str,
    source: Path,
    read: Callable[[Path], str],
    *,
    home: Path | None = None,
    max_depth: int = MAX_IMPORT_DEPTH,
    label: Callable[[Path], str] = str,
    may_read: Callable[[Path], bool] | None = None,
    max_imported_chars: int = MAX_IMPORTED_CHARS,
) -> Expansion:
    """Expand `<!-- @import path -->` in `text`, which was read from the file `source`.

    Pure over `read` (which raises GuideReadError or OSError for an unusable file). The directives
    in `text` are level 1; a directive deeper than `max_depth`, one that closes a cycle, or one
    whose file cannot be read is left exactly as written and reported once. Paths are relative to
    the importing file's directory; a leading `~` means `home` (the real home directory if None).
    A target `may_read` refuses (one outside the workspace) is left as written and listed in
    `outside`, without a warning: the caller reports those together. Once the imports read add up
    to `max_imported_chars`, the remaining directives are left as written.
    """
    files: list[Path] = []
    warnings: list[str] = []
    outside: list[OutsidePath] = []
    root = _normalize(source)
    imported = 0

    def expand(body: str, importer: Path, depth: int, chain: frozenset[Path]) -> str:
        def replace(match: re.Match[str]) -> str:
            nonlocal imported
            directive = match.group(0)
            where = f"{label(importer)}: {directive}"
            if depth > max_depth:
                warnings.append(f"{where}: nested deeper than {max_depth} levels; left as written")
                return directive
            target = _resolve(match.group("path"), importer.parent, home)
            if may_read is not None and not may_read(target):
                found = OutsidePath(match.group("path"), _real(target), label(importer))
                if found not in outside:
                    outside.append(found)
                return directive
            if target in chain:
                warnings.append(f"{where}: import cycle back to {label(target)}; left as written")
                return directive
            if imported >= max_imported_chars:
                warnings.append(
                    f"{label(root)}: imports add up to more than {max_imported_chars} characters; "
                    "the rest are left as written"
                )
                return directive
            try:
                content = read(target)
            except GuideReadError as e:
                warnings.append(f"{where}: {label(target)}: {e.reason}; left as written")
                return directive
            except OSError as e:
                warnings.append(f"{where}: {label(target)}: {_os_reason(e)}; left as written")
                return directive
            imported += len(content)
            if target not in files:
                files.append(target)
            return expand(content, target, depth + 1, chain | {target}).rstrip("\n")

        return IMPORT_RE.sub(replace, body)

    expanded = expand(text, root, 1, frozenset({root}))
    return Expansion(expanded, files, _unique(warnings), outside)


def discover_guides(
    workspace: Path,
    *,
    home: Path,
    extra_paths: Sequence[Path] = (),
    project_paths: Sequence[Path] = (),
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    read: Callable[[Path], str] = read_guide_file,
    allow_outside: bool = False,
) -> GuideResult:
    """Find the project guide for `workspace` and build the guide text for the frozen prompt.

    `extra_paths` (the user's `guides.extra_paths`) and `project_paths` (the same setting from a
    project file) may start with `~` (meaning `home`) or be relative to the workspace. Project
    files — the candidates in the workspace, `project_paths`, and everything they import — are
    read only when they resolve inside the workspace, or with `allow_outside` (a trusted
    workspace); the others are listed in `outside`.
    """
    workspace = _normalize(workspace)
    label = _labeller(workspace, home)
    # (path, confined to the workspace, as written), in the order they are tried
    candidates: list[tuple[Path, bool, str | None]] = [
        (workspace / name, True, None) for name in PROJECT_CANDIDATES
    ]
    candidates.append((_normalize(home / USER_GUIDE), False, None))
    candidates.extend((_resolve(str(p), workspace, home), False, None) for p in extra_paths)
    candidates.extend((_resolve(str(p), workspace, home), True, str(p)) for p in project_paths)

    sections: list[tuple[Path, str]] = []
    files: list[Path] = []
    warnings: list[str] = []
    outside: list[OutsidePath] = []

    def may_read(path: Path) -> bool:
        # A missing path is let through, so it is reported as missing like any other.
        return allow_outside or is_inside(path, workspace) or not os.path.exists(path)

    def load(path: Path, text: str, confined: bool) -> None:
        files.append(path)
        # Only CLAUDE* guides expand imports; AGENTS.md (and any other name) is taken verbatim.
        if path.name.startswith("CLAUDE"):
            expansion = expand_imports(
                text, path, read, home=home, label=label, may_read=may_read if confined else None
            )
            text = expansion.text
            files.extend(f for f in expansion.files if f not in files)
            warnings.extend(expansion.warnings)
            outside.extend(o for o in expansion.outside if o not in outside)
        if text.strip():
            sections.append((path, text))

    def usable(path: Path, confined: bool, setting: str | None) -> str | None:
        if confined and not may_read(path):
            written = setting if setting is not None else label(path)
            kind: Literal["guide", "extra_path"] = "extra_path" if setting else "guide"
            outside.append(OutsidePath(written, _real(path), label(path), kind))
            return None
        return _read(path, read, label, warnings)

    for path, confined, setting in candidates:
        # A candidate that exists but cannot be used (binary, a directory, no permission, outside
        # the workspace) gives no rules, so it must not block the rest of the list.
        text = usable(path, confined, setting)
        if text is not None:
            # The first usable candidate is the guide, even when empty: an empty AGENTS.md still
            # means "this project has a guide", so the user-level fallback does not apply.
            load(path, text, confined)
            break

    local = workspace / LOCAL_GUIDE
    local_text = usable(local, True, None)
    if local_text is not None and local_text.strip():
        load(local, local_text, True)

    combined = "\n\n".join(f"# Guide: {label(p)}\n\n{_trim_blank_edges(t)}" for p, t in sections)
    if combined:
        combined += "\n"
    combined, cut_warning = cut_to_budget(combined, budget_bytes)
    if cut_warning:
        warnings.append(cut_warning)
    return GuideResult(combined, files, _unique(warnings), outside)


def cut_to_budget(text: str, budget_bytes: int) -> tuple[str, str | None]:
    """Cut `text` to at most `budget_bytes` UTF-8 bytes plus a visible note -> (text, warning)."""
    data = text.encode("utf-8")
    total = len(data)
    if total <= budget_bytes:
        return text, None
    limit = max(budget_bytes, 0)
    # Prefer a line boundary, unless that would throw away more than half of what fits.
    newline = data.rfind(b"\n", 0, limit)
    cut = newline + 1 if newline >= 0 and newline + 1 >= limit // 2 else limit
    while cut > 0 and cut < total and (data[cut] & 0xC0) == 0x80:
        cut -= 1  # never split a multi-byte character
    shown = data[:cut].decode("utf-8")
    note = (
        f"[guide cut: {cut} of {total} bytes shown; the guide files exceed the "
        f"{budget_bytes}-byte budget (guides.budget_bytes)]"
    )
    if shown and not shown.endswith("\n"):
        shown += "\n"
    warning = f"guide text is {total} bytes, over the budget of {budget_bytes}; cut to {cut} bytes"
    return f"{shown}{note}\n", warning


def _read(
    path: Path, read: Callable[[Path], str], label: Callable[[Path], str], warnings: list[str]
) -> str | None:
    """The file's text, or None; a file that exists but cannot be used is added to `warnings`."""
    try:
        return read(path)
    except GuideReadError as e:
        if not e.missing:
            warnings.append(f"{label(path)}: {e.reason}; skipped")
    except FileNotFoundError:
        pass
    except OSError as e:
        warnings.append(f"{label(path)}: {_os_reason(e)}; skipped")
    return None


def _resolve(raw: str, base_dir: Path, home: Path | None) -> Path:
    if raw == "~" or raw.startswith(("~/", "~" + os.sep)):
        path = (home if home is not None else Path.home()) / raw[2:]
    else:
        path = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    return _normalize(base_dir / path)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _normalize(path: Path) -> Path:
    # Lexical only (no resolve()): keeps the expander pure; depth bounds any symlink loop.
    return Path(os.path.normpath(path))


def _labeller(workspace: Path, home: Path) -> Callable[[Path], str]:
    home = _normalize(home)

    def label(path: Path) -> str:
        if path.is_relative_to(workspace):
            return path.relative_to(workspace).as_posix()
        if path.is_relative_to(home):
            return "~/" + path.relative_to(home).as_posix()
        return str(path)

    return label


def _os_reason(e: OSError) -> str:
    if isinstance(e, FileNotFoundError):
        return "file not found"
    if isinstance(e, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(e, PermissionError):
        return "permission denied"
    return f"cannot read ({e.strerror or e})"


def _trim_blank_edges(text: str) -> str:
    return text.strip("\n")


def _unique(items: list[str]) -> list[str]:
    """Each warning once, with control characters from file text made visible."""
    return [visible(item) for item in dict.fromkeys(items)]
