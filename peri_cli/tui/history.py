"""Prompt history shared by every session: `$PERI_HOME/history.jsonl`, one JSON object a line."""

from __future__ import annotations

import json
from pathlib import Path

HISTORY_FILE = "history.jsonl"
KEEP = 1000


class PromptHistory:
    """The prompts sent so far (oldest first) plus an Up/Down cursor over them."""

    def __init__(self, path: Path | None, *, keep: int = KEEP) -> None:
        self.path = path
        self.keep = keep
        self.entries: list[str] = self._load()
        self._cursor = len(self.entries)
        self._draft = ""

    def _load(self) -> list[str]:
        if self.path is None:
            return []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        entries: list[str] = []
        for line in lines[-self.keep :]:
            try:
                text = json.loads(line).get("text")
            except (ValueError, AttributeError):
                continue  # a torn or foreign line costs one entry, not the history
            if isinstance(text, str) and text:
                entries.append(text)
        return entries

    def add(self, text: str, *, workspace: str = "") -> None:
        if not text.strip():
            return
        if not self.entries or self.entries[-1] != text:
            self.entries.append(text)
            del self.entries[: -self.keep]
            self._save(text, workspace)
        self.reset()

    def _save(self, text: str, workspace: str) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(
                    json.dumps({"text": text, "workspace": workspace}, ensure_ascii=False) + "\n"
                )
        except OSError:
            pass  # history is a convenience; never fail a prompt over it

    def reset(self) -> None:
        self._cursor = len(self.entries)
        self._draft = ""

    def previous(self, current: str) -> str | None:
        """The entry before the cursor; the first call remembers `current` as the draft."""
        if self._cursor == 0:
            return None
        if self._cursor == len(self.entries):
            self._draft = current
        self._cursor -= 1
        return self.entries[self._cursor]

    def next(self) -> str | None:
        """The entry after the cursor, then the draft; None when already at the draft."""
        if self._cursor >= len(self.entries):
            return None
        self._cursor += 1
        if self._cursor == len(self.entries):
            return self._draft
        return self.entries[self._cursor]
