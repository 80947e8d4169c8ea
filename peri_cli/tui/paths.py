"""Paths as the user must read them before approving: where the call really lands."""

from __future__ import annotations

import os
from pathlib import Path


def shown_path(raw: str, workspace: Path | None) -> str:
    """`raw` resolved as a tool resolves it (`~`, relative to the workspace), then `..` and
    symlinks followed; relative to the workspace when inside it. `docs/x/../../.git/hooks/a`
    reads `.git/hooks/a`. A path that cannot be resolved is shown as written."""
    if workspace is None:
        return raw
    try:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = workspace / path
        real = Path(os.path.realpath(path))
        root = Path(os.path.realpath(workspace))
    except (OSError, ValueError, RuntimeError):  # a NUL byte, an unknown ~user, a loop
        return raw
    if real == root:
        return "."
    if root in real.parents:
        return str(real.relative_to(root))
    return str(real)
