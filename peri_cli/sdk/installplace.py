"""Where Peri itself runs from, and what is said when a sandboxed command could change it (the
README's quick start installs Peri in the clone's `.venv`): then a command could rewrite the
interpreter or the code that the next Peri, and its stream worker and reaper, run as the user,
so sandboxed commands are not auto-allowed."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import peri_cli
from peri_cli.base.exec_path import first_inside, within_any
from peri_cli.base.textsafe import visible


def peri_places() -> list[Path]:
    """The interpreter's environment and executable (as started: a venv's `bin/python` is a
    link out of it) and Peri's code (an editable install's is the clone)."""
    return [Path(sys.prefix), Path(sys.executable), Path(peri_cli.__file__).parent]


def peri_inside(writable: Iterable[Path]) -> Path | None:
    """The first of `peri_places` that a sandboxed command may write, if any."""
    return first_inside(peri_places(), writable)


def inside_warning(place: Path, workspace: Path) -> str:
    """What Peri says at start (and `/sandbox`) when it runs from `place`."""
    where = "inside the workspace" if within_any(place, [workspace]) else "a folder"
    return (
        f"Peri runs from {where} ({visible(str(place))}), which sandboxed commands can write, "
        "so they could change Peri itself: sandboxed commands are not auto-allowed (each one "
        "asks) until Peri is installed outside it, e.g. `pipx install <clone>` or "
        "`uv tool install <clone>`"
    )
