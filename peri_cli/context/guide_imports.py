"""`<!-- @import path -->` expansion in CLAUDE* guides (PRODUCT.md §3): at most three levels,
no cycles, a bound on what all imports of one guide read, and a project guide's imports confined
to the workspace unless it is trusted. Pure over the `read` it is given; problems are warnings,
never exceptions."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from peri_cli.base.textsafe import visible

MAX_IMPORT_DEPTH = 3
# All the imports of one guide together: a guide importing one big file ten thousand times (or a
# diamond three levels deep) must not read gigabytes only to be cut to the budget.
MAX_IMPORTED_CHARS = 4 << 20

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
    root = normalize(source)
    expander = _Expander(read, home, max_depth, label, may_read, max_imported_chars, root)
    expanded = expander.expand(text, root, 1, frozenset({root}))
    return Expansion(expanded, expander.files, unique(expander.warnings), expander.outside)


@dataclass
class _Expander:
    """One expansion's settings and what it has met so far (files, warnings, outside paths, and
    the characters imported, which bound the rest)."""

    read: Callable[[Path], str]
    home: Path | None
    max_depth: int
    label: Callable[[Path], str]
    may_read: Callable[[Path], bool] | None
    max_imported_chars: int
    root: Path
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    outside: list[OutsidePath] = field(default_factory=list)
    imported: int = 0

    def expand(self, body: str, importer: Path, depth: int, chain: frozenset[Path]) -> str:
        return IMPORT_RE.sub(lambda m: self._replace(m, importer, depth, chain), body)

    def _replace(
        self, match: re.Match[str], importer: Path, depth: int, chain: frozenset[Path]
    ) -> str:
        directive = match.group(0)
        found = self._content(match, importer, depth, chain)
        if found is None:
            return directive
        target, content = found
        self.imported += len(content)
        if target not in self.files:
            self.files.append(target)
        return self.expand(content, target, depth + 1, chain | {target}).rstrip("\n")

    def _content(
        self, match: re.Match[str], importer: Path, depth: int, chain: frozenset[Path]
    ) -> tuple[Path, str] | None:
        """The imported file and its text, or None when the directive stays as written (each
        reason reported, an outside path listed)."""
        label, warnings = self.label, self.warnings
        where = f"{label(importer)}: {match.group(0)}"
        if depth > self.max_depth:
            warnings.append(f"{where}: nested deeper than {self.max_depth} levels; left as written")
            return None
        target = resolve(match.group("path"), importer.parent, self.home)
        if self.may_read is not None and not self.may_read(target):
            found = OutsidePath(match.group("path"), real(target), label(importer))
            if found not in self.outside:
                self.outside.append(found)
            return None
        if target in chain:
            warnings.append(f"{where}: import cycle back to {label(target)}; left as written")
            return None
        if self.imported >= self.max_imported_chars:
            warnings.append(
                f"{label(self.root)}: imports add up to more than {self.max_imported_chars} "
                "characters; the rest are left as written"
            )
            return None
        try:
            return target, self.read(target)
        except GuideReadError as e:
            warnings.append(f"{where}: {label(target)}: {e.reason}; left as written")
        except OSError as e:
            warnings.append(f"{where}: {label(target)}: {os_reason(e)}; left as written")
        return None


def resolve(raw: str, base_dir: Path, home: Path | None) -> Path:
    if raw == "~" or raw.startswith(("~/", "~" + os.sep)):
        path = (home if home is not None else Path.home()) / raw[2:]
    else:
        path = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    return normalize(base_dir / path)


def real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def normalize(path: Path) -> Path:
    # Lexical only (no resolve()): keeps the expander pure; depth bounds any symlink loop.
    return Path(os.path.normpath(path))


def os_reason(e: OSError) -> str:
    if isinstance(e, FileNotFoundError):
        return "file not found"
    if isinstance(e, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(e, PermissionError):
        return "permission denied"
    return f"cannot read ({e.strerror or e})"


def unique(items: list[str]) -> list[str]:
    """Each warning once, with control characters from file text made visible."""
    return [visible(item) for item in dict.fromkeys(items)]
