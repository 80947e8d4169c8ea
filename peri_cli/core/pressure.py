"""Pressure on the context window: how full the next request will make it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from peri_cli.core.messages import ImagePart, Message, ToolResultPart, dump_message
from peri_cli.core.projection import project
from peri_cli.core.tokens import IMAGE_TOKENS_MAX, RATIO_MAX
from peri_cli.core.transcript import (
    ClearMarker,
    CompactBoundary,
    Entry,
    MessageEntry,
    ProjectionEntry,
)


@dataclass(frozen=True)
class Pressure:
    """How full the next request will make the window.

    `key` names the sample: the assistant entry whose provider usage it starts from and the last
    message since. A compaction that adds no message keeps the key; new model output changes it.
    """

    tokens: int
    window: int
    key: tuple[str, str]
    from_usage: bool

    @property
    def ratio(self) -> float:
        return self.tokens / self.window if self.window else 0.0


def _last_usage(entries: Sequence[Entry]) -> int | None:
    """Index of the last assistant entry with usage that still describes the current history."""
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if isinstance(e, ClearMarker | CompactBoundary):
            return None  # a usage report from before these describes a different history
        if isinstance(e, MessageEntry) and e.message.role == "assistant" and e.usage is not None:
            return i
    return None


def measure_pressure(
    entries: Sequence[Entry],
    *,
    window: int,
    base_tokens: int,
    count_messages: Callable[[Sequence[Message]], int],
) -> Pressure:
    """Pure: pressure from the entries alone, so it is the same after a resume.

    With a usage report: its prompt tokens (cache reads and writes included) plus its output,
    plus an estimate of the messages appended since, minus what Micro directives recorded since
    have freed. Without one (a new session, or history changed by /clear or Full since): the
    estimate of the whole request, `base_tokens` (system and tool schemas) included.
    """
    last_message = next((e.id for e in reversed(entries) if isinstance(e, MessageEntry)), "")
    i = _last_usage(entries)
    if i is not None:
        entry = entries[i]
        assert isinstance(entry, MessageEntry) and entry.usage is not None
        tokens = entry.usage.prompt_tokens + entry.usage.output_tokens
        added: list[Message] = []
        for e in entries[i + 1 :]:
            if isinstance(e, MessageEntry):
                added.append(e.message)
            elif isinstance(e, ProjectionEntry):
                if e.tokens_before is None or e.tokens_after is None:
                    break  # freed an unknown amount: estimate instead
                tokens -= e.tokens_before - e.tokens_after
        else:
            tokens += count_messages(added)
            return Pressure(max(0, tokens), window, (entry.id, last_message), True)
    tokens = base_tokens + count_messages(project(entries))
    return Pressure(tokens, window, ("", last_message), False)


def token_bound(messages: Sequence[Message]) -> int:
    """A cheap upper bound of what the counter can say `messages` cost: a token never covers less
    than one UTF-8 byte, and calibration scales by at most RATIO_MAX. Needs no tokenizer."""
    total = 0
    for m in messages:
        total += len(json.dumps(dump_message(m), ensure_ascii=False).encode())
        for part in m.content:
            inner = part.content if isinstance(part, ToolResultPart) else [part]
            total += IMAGE_TOKENS_MAX * sum(isinstance(p, ImagePart) for p in inner)
    return int(total * RATIO_MAX)
