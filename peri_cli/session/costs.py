"""/cost: what a session spent, from the usage recorded in its transcript and its SubAgents'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from peri_cli.base.messages import Usage
from peri_cli.base.models import cost_usd
from peri_cli.session.store import AGENTS_DIR
from peri_cli.session.transcript import Entry, MessageEntry
from peri_cli.session.transcript_file import TranscriptError, load


@dataclass
class Spend:
    """Usage and money of one agent's replies (None money: a model without a known price)."""

    usage: Usage = field(default_factory=Usage)
    usd: float | None = 0.0
    replies: int = 0
    estimated: bool = False  # some usage was counted by Peri, the provider reported none

    def add(self, entry: MessageEntry, model: str) -> None:
        if entry.usage is None:
            return
        self.usage = self.usage + entry.usage
        more = cost_usd(entry.model or model, entry.usage)
        self.usd = None if self.usd is None or more is None else self.usd + more
        self.replies += 1
        self.estimated = self.estimated or entry.usage_estimated

    def __add__(self, other: Spend) -> Spend:
        usd = None if self.usd is None or other.usd is None else self.usd + other.usd
        return Spend(
            self.usage + other.usage,
            usd,
            self.replies + other.replies,
            self.estimated or other.estimated,
        )


@dataclass
class CostReport:
    main: Spend
    subagents: Spend
    subagent_count: int

    @property
    def total(self) -> Spend:
        return self.main + self.subagents


def spend_of(entries: Sequence[Entry], model: str) -> Spend:
    spend = Spend()
    for entry in entries:
        if isinstance(entry, MessageEntry):
            spend.add(entry, model)
    return spend


def session_costs(entries: Sequence[Entry], session_dir: Path, model: str) -> CostReport:
    """The main agent's spend from `entries` (the whole record), and every SubAgent's from its
    own transcript under the session folder (an unreadable one is left out)."""
    children = Spend()
    count = 0
    folder = session_dir / AGENTS_DIR
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        try:
            loaded = load(path)
        except (TranscriptError, OSError):
            continue
        children = children + spend_of(loaded.entries, model)
        count += 1
    return CostReport(spend_of(entries, model), children, count)
