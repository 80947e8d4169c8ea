"""Project guide discovery (AGENTS.md, CLAUDE.md, .claude/AGENTS.md); `@import` expansion is in
`guide_imports`.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from peri_cli.base.safe_read import SafeReadError, is_inside, read_text
from peri_cli.context.guide_imports import (
    GuideReadError,
    OutsidePath,
    expand_imports,
    normalize,
    os_reason,
    real,
    resolve,
    unique,
)

DEFAULT_BUDGET_BYTES = 40_000
MAX_GUIDE_FILE_BYTES = 1 << 20  # per file; the combined text is cut to the budget anyway

PROJECT_CANDIDATES = ("AGENTS.md", "CLAUDE.md", ".claude/AGENTS.md")
USER_GUIDE = ".claude/AGENTS.md"
LOCAL_GUIDE = "CLAUDE.local.md"


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
    workspace = normalize(workspace)
    found = _Discovery(workspace, home, read, allow_outside, _labeller(workspace, home))
    # (path, confined to the workspace, as written), in the order they are tried
    candidates: list[tuple[Path, bool, str | None]] = [
        (workspace / name, True, None) for name in PROJECT_CANDIDATES
    ]
    candidates.append((normalize(home / USER_GUIDE), False, None))
    candidates.extend((resolve(str(p), workspace, home), False, None) for p in extra_paths)
    candidates.extend((resolve(str(p), workspace, home), True, str(p)) for p in project_paths)
    for path, confined, setting in candidates:
        # A candidate that exists but cannot be used (binary, a directory, no permission, outside
        # the workspace) gives no rules, so it must not block the rest of the list.
        text = found.usable(path, confined, setting)
        if text is not None:
            # The first usable candidate is the guide, even when empty: an empty AGENTS.md still
            # means "this project has a guide", so the user-level fallback does not apply.
            found.load(path, text, confined)
            break
    local = workspace / LOCAL_GUIDE
    local_text = found.usable(local, True, None)
    if local_text is not None and local_text.strip():
        found.load(local, local_text, True)
    return found.result(budget_bytes)


@dataclass
class _Discovery:
    """One discovery's settings and what it has gathered: guide sections, files, warnings and
    the project paths left unread."""

    workspace: Path
    home: Path
    read: Callable[[Path], str]
    allow_outside: bool
    label: Callable[[Path], str]
    sections: list[tuple[Path, str]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    outside: list[OutsidePath] = field(default_factory=list)

    def may_read(self, path: Path) -> bool:
        # A missing path is let through, so it is reported as missing like any other.
        return self.allow_outside or is_inside(path, self.workspace) or not os.path.exists(path)

    def usable(self, path: Path, confined: bool, setting: str | None) -> str | None:
        """The file's text, or None: missing, unusable (warned) or outside (listed)."""
        if confined and not self.may_read(path):
            written = setting if setting is not None else self.label(path)
            kind: Literal["guide", "extra_path"] = "extra_path" if setting else "guide"
            self.outside.append(OutsidePath(written, real(path), self.label(path), kind))
            return None
        return _read(path, self.read, self.label, self.warnings)

    def load(self, path: Path, text: str, confined: bool) -> None:
        self.files.append(path)
        # Only CLAUDE* guides expand imports; AGENTS.md (and any other name) is taken verbatim.
        if path.name.startswith("CLAUDE"):
            may_read = self.may_read if confined else None
            expansion = expand_imports(
                text, path, self.read, home=self.home, label=self.label, may_read=may_read
            )
            text = expansion.text
            self.files.extend(f for f in expansion.files if f not in self.files)
            self.warnings.extend(expansion.warnings)
            self.outside.extend(o for o in expansion.outside if o not in self.outside)
        if text.strip():
            self.sections.append((path, text))

    def result(self, budget_bytes: int) -> GuideResult:
        """The sections joined under their headings and cut to the budget."""
        label = self.label
        combined = "\n\n".join(
            f"# Guide: {label(p)}\n\n{_trim_blank_edges(t)}" for p, t in self.sections
        )
        if combined:
            combined += "\n"
        combined, cut_warning = cut_to_budget(combined, budget_bytes)
        if cut_warning:
            self.warnings.append(cut_warning)
        return GuideResult(combined, self.files, unique(self.warnings), self.outside)


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
        warnings.append(f"{label(path)}: {os_reason(e)}; skipped")
    return None


def _labeller(workspace: Path, home: Path) -> Callable[[Path], str]:
    home = normalize(home)

    def label(path: Path) -> str:
        if path.is_relative_to(workspace):
            return path.relative_to(workspace).as_posix()
        if path.is_relative_to(home):
            return "~/" + path.relative_to(home).as_posix()
        return str(path)

    return label


def _trim_blank_edges(text: str) -> str:
    return text.strip("\n")
