"""What in a plugin runs code, as a fingerprint to compare an update against: every file that is
not Markdown (hook scripts, the packages they import, server definitions, hooks.json), and in
each command file the lines that run commands (`` !`cmd` ``) and its `allowed-tools`. A change to
any of these is shown, and asked about again, before the update lands; prose is not."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

MAX_HASHED_BYTES = 64 << 20  # a larger file is fingerprinted by its size and time
_RUNS = re.compile(rb"!`[^`\n]*`|^allowed-tools:.*$", re.MULTILINE)
SKIPPED = {".git"}


def fingerprint(root: Path) -> dict[str, str]:
    """`relative path → digest` of what runs code under `root` (symlinks by their target)."""
    found: dict[str, str] = {}
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        try:
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[rel] = "link:" + os.readlink(path)
            elif not stat.S_ISREG(mode):
                found[rel] = "special"  # a FIFO or a device is never opened
            elif path.suffix == ".md":
                lines = b"\n".join(_RUNS.findall(_head(path)))
                if lines:
                    found[rel] = "runs:" + hashlib.sha256(lines).hexdigest()
            else:
                found[rel] = _digest(path)
        except OSError as e:
            found[rel] = f"unreadable:{e.errno}"
    return found


def _files(root: Path) -> list[Path]:
    out: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        for name in sorted(files):
            out.append(Path(folder) / name)  # every file: one left out could change unseen
        for d in dirs:
            if (Path(folder) / d).is_symlink():
                out.append(Path(folder) / d)  # os.walk does not follow it; its target counts
    return out


def _head(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(1 << 20)


def _digest(path: Path) -> str:
    info = path.stat()
    if info.st_size > MAX_HASHED_BYTES:
        return f"size:{info.st_size}:{info.st_mtime_ns}"
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return ("exec:" if info.st_mode & 0o111 else "") + h.hexdigest()


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What an update changes in what runs: one line per file, sorted."""
    lines = []
    for rel in sorted(set(before) | set(after)):
        if rel not in before:
            lines.append(f"added: {rel}")
        elif rel not in after:
            lines.append(f"removed: {rel}")
        elif before[rel] != after[rel]:
            lines.append(f"changed: {rel}")
    return lines
