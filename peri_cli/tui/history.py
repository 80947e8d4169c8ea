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
        self.workspaces: list[str] = []  # where each entry was sent, when known
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
                record = json.loads(line)
                text, where = record.get("text"), record.get("workspace", "")
            except (ValueError, AttributeError):
                continue  # a torn or foreign line costs one entry, not the history
            if isinstance(text, str) and text:
                entries.append(text)
                self.workspaces.append(where if isinstance(where, str) else "")
        return entries

    def add(self, text: str, *, workspace: str = "") -> None:
        if not text.strip():
            return
        if not self.entries or self.entries[-1] != text:
            self.entries.append(text)
            self.workspaces.append(workspace)
            del self.entries[: -self.keep]
            del self.workspaces[: -self.keep]
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

    def search(self, query: str, workspace: str = "", limit: int = 50) -> list[str]:
        """Ctrl+R: entries matching `query` fuzzily (its characters in order), each once; this
        workspace's first, then the rest; the best and newest first within each."""
        found: list[tuple[int, int, int, str]] = []
        seen: set[str] = set()
        for age, (text, where) in enumerate(
            zip(reversed(self.entries), reversed(self.workspaces), strict=True)
        ):
            if text in seen:
                continue
            score = fuzzy_score(query, text)
            if score is None:
                continue
            seen.add(text)
            found.append((0 if where == workspace else 1, score, age, text))
        found.sort()
        return [text for *_, text in found[:limit]]


def fuzzy_score(query: str, text: str) -> int | None:
    """How well `text` holds `query`'s characters in order, ignoring case (lower is better:
    a whole substring scores its position; scattered characters score by the gaps); None when
    they are not all there."""
    q, t = query.lower(), text.lower()
    if not q:
        return 0
    at = t.find(q)
    if at >= 0:
        return at
    position, gaps = -1, 0
    for ch in q:
        nxt = t.find(ch, position + 1)
        if nxt < 0:
            return None
        if position >= 0:
            gaps += nxt - position - 1
        position = nxt
    return 1000 + gaps
