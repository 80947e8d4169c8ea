"""One writer per file across agents: a SubAgent holds each file it writes until it ends.

While a SubAgent holds a file (claimed at its first Write or Edit of it), a write to that file by
any other agent, the main one included, is refused with a message naming the holder. The main
agent claims nothing: it is there for the whole session and would lock its children out.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

MAIN = None  # the main agent's id


class WriteOwners:
    def __init__(self) -> None:
        self._held: dict[Path, tuple[str, str]] = {}  # path -> (agent id, label)

    def conflict(self, agent_id: str | None, paths: Iterable[Path]) -> str | None:
        """Why `agent_id` may not write one of `paths` now, or None."""
        for path in paths:
            holder = self._held.get(path)
            if holder is not None and holder[0] != agent_id:
                return (
                    f"{path} is being written by SubAgent {holder[1]} ({holder[0][:8]}); "
                    "only one agent may write a file at a time. Wait for it to finish, or "
                    "leave this file to it."
                )
        return None

    def claim(self, agent_id: str | None, label: str, paths: Iterable[Path]) -> None:
        """Hold `paths` for a SubAgent until `release` (the main agent holds nothing)."""
        if agent_id is not MAIN:
            for path in paths:
                self._held.setdefault(path, (agent_id, label))

    def release(self, agent_id: str) -> None:
        self._held = {p: h for p, h in self._held.items() if h[0] != agent_id}

    def holder(self, path: Path) -> str | None:
        held = self._held.get(path)
        return held[0] if held else None
