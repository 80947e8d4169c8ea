"""Pressure on the context window: how full the next request will make it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from peri_cli.base.messages import ImagePart, Message, ToolResultPart, Usage, dump_message
from peri_cli.context.estimate import IMAGE_TOKENS_MAX
from peri_cli.context.projection import project
from peri_cli.context.tokens import RATIO_MAX
from peri_cli.session.transcript import (
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


def usage_estimated(entry: MessageEntry) -> bool:
    """Whether the entry's usage was estimated by Peri because the provider reported none."""
    flag = getattr(entry, "usage_estimated", None)
    if flag is None:
        flag = (entry.model_extra or {}).get("usage_estimated")
    return flag is True


def reported_usage(entry: Entry) -> Usage | None:
    """The usage of an assistant entry if it says anything: a provider that reported nothing
    (no usage, or all zeros) leaves the history to be estimated instead."""
    if not isinstance(entry, MessageEntry) or entry.message.role != "assistant":
        return None
    usage = entry.usage
    return usage if usage is not None and usage.prompt_tokens > 0 else None


def _last_usage(entries: Sequence[Entry]) -> int | None:
    """Index of the last assistant entry with usage that still describes the current history."""
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if isinstance(e, ClearMarker | CompactBoundary):
            return None  # a usage report from before these describes a different history
        if reported_usage(e) is not None:
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
        usage = reported_usage(entry)
        assert isinstance(entry, MessageEntry) and usage is not None
        tokens = usage.prompt_tokens + usage.output_tokens
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


@dataclass(frozen=True)
class PrefixShare:
    """How much of the input the provider read from its prompt cache, over the requests after
    the first (the first has nothing to read). `share` is None when no request reported cache
    figures (a provider without them, or estimated usage only)."""

    cache_read: int
    total: int
    requests: int

    @property
    def share(self) -> float | None:
        return self.cache_read / self.total if self.total else None


def stable_prefix_share(entries: Sequence[Entry]) -> PrefixShare:
    """Pure: cache reads / all input tokens, summed over the usage the provider reported on the
    assistant entries given (estimated usage is left out: it knows nothing of the cache)."""
    reports = [
        u
        for e in entries
        if isinstance(e, MessageEntry)
        and not usage_estimated(e)
        and (u := reported_usage(e)) is not None
    ]
    later = reports[1:]
    return PrefixShare(
        cache_read=sum(u.cache_read_input_tokens for u in later),
        total=sum(u.prompt_tokens for u in later),
        requests=len(later),
    )
