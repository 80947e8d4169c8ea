"""Test servers note their pid in `$PERI_TEST_PIDFILE` (one line each) so tests can find them."""

from __future__ import annotations

import os


def note_pid() -> None:
    path = os.environ.get("PERI_TEST_PIDFILE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
