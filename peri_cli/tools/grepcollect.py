"""What Grep keeps of a search's output lines: the first ones, up to the caps, and the count of
all of them (lines about files a Read deny rule hides are counted apart)."""

from __future__ import annotations

from collections.abc import Callable

MAX_LINES = 1000
MAX_CHARS = 40_000
MAX_LINE_CHARS = 500


class Collector:
    """Keeps the first output lines, up to the caps, and counts all of them."""

    def __init__(self, keep: Callable[[str], bool] | None = None) -> None:
        self.keep = keep  # False for a line about a file a Read deny rule hides
        self.hidden = 0
        self.reset()

    def reset(self) -> None:
        """Forget everything, for a search that starts over."""
        self.lines: list[str] = []
        self.total = 0
        self._chars = 0
        self._full = False

    def add(self, line: str) -> None:
        if self.keep is not None and not self.keep(line):
            self.hidden += 1
            return
        self.total += 1
        if self._full:
            return
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [… line truncated]"
        if len(self.lines) >= MAX_LINES or self._chars + len(line) > MAX_CHARS:
            self._full = True
            return
        self.lines.append(line)
        self._chars += len(line) + 1
