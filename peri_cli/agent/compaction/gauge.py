"""Measuring for compaction: the window, what a request weighs, the pressure the next request
puts on the window, and the counter's calibration against what the provider reported."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from peri_cli.base.models import context_window
from peri_cli.context.micro import _json
from peri_cli.context.pressure import (
    Pressure,
    _last_usage,
    measure_pressure,
    reported_usage,
    token_bound,
    usage_estimated,
)
from peri_cli.context.projection import project
from peri_cli.context.tokens import RATIO_MAX, TokenCounter
from peri_cli.session.transcript import Entry, MessageEntry

if TYPE_CHECKING:
    from peri_cli.agent.compaction.port import CompactionContext
    from peri_cli.base.provider import ModelRequest


def _base_texts(request: ModelRequest) -> tuple[str, str, str]:
    """What a request carries besides its messages: system prompt parts and tool schemas."""
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]
    return request.frozen_system, request.dynamic_system, _json(tools) if tools else ""


class Gauge:
    """The counter, fitted to the provider, applied to an agent's requests and window."""

    def __init__(self, counter: TokenCounter, window_override: int | None = None) -> None:
        self.counter = counter
        self.window_override = window_override
        self._calibrated: str | None = None  # usage entry id last used for calibration
        self._raw_texts: dict[str, int] = {}  # system prompts and schemas repeat: count once

    def window(self, agent: CompactionContext) -> int:
        return context_window(agent.model, self.window_override)

    def _raw_text(self, text: str) -> int:
        n = self._raw_texts.get(text)
        if n is None:
            if len(self._raw_texts) > 64:
                self._raw_texts.clear()
            n = self._raw_texts[text] = self.counter.raw_text(text)
        return n

    def base_tokens(self, request: ModelRequest) -> int:
        """System prompt and tool schemas of a request, as the counter sees them."""
        raw = sum(self._raw_text(t) for t in _base_texts(request))
        return round(raw * self.counter.ratio)

    def request_tokens(self, request: ModelRequest) -> int:
        return self.base_tokens(request) + self.counter.count_messages(request.messages)

    def clearly_below(self, agent: CompactionContext, request: ModelRequest, ratio: float) -> bool:
        """Whether pressure is surely under `ratio`, judged without a tokenizer (so a short
        session never pays for loading one)."""
        base = sum(len(t.encode()) for t in _base_texts(request))
        bound = measure_pressure(
            agent.session.entries,
            window=self.window(agent),
            base_tokens=int(base * RATIO_MAX),
            count_messages=token_bound,
        )
        return bound.ratio < ratio

    def pressure(self, agent: CompactionContext, request: ModelRequest | None = None) -> Pressure:
        """The pressure the next request (`request`, or the one the agent would build now) puts
        on the window, calibrating the counter first."""
        entries = agent.session.entries
        request = request or agent.build_request()
        self._calibrate(entries, request)
        return measure_pressure(
            entries,
            window=self.window(agent),
            base_tokens=self.base_tokens(request),
            count_messages=self.counter.count_messages,
        )

    def _calibrate(self, entries: Sequence[Entry], request: ModelRequest) -> None:
        """Fit the counter to the provider: estimate the request behind the last usage report."""
        i = _last_usage(entries)
        if i is None:
            return
        entry = entries[i]
        usage = reported_usage(entry)
        assert isinstance(entry, MessageEntry) and usage is not None
        if entry.id == self._calibrated or usage_estimated(entry):
            return  # an estimate is the counter's own figure: nothing to learn from it
        self._calibrated = entry.id
        sent = project(entries[:i])
        estimated = self.base_tokens(request) + self.counter.count_messages(sent)
        self.counter.calibrate(estimated, usage.prompt_tokens)


def prefix_note(freed: int, changed: int, after: int) -> str:
    """How a compaction step reads in the event's detail: what it freed against what it costs
    the prompt cache."""
    share = changed / after if after > 0 else 0.0
    return (
        f"freed {freed:,} tokens; the prompt-cache prefix changed for {changed:,} tokens "
        f"({share:.0%} of the next request)"
    )
