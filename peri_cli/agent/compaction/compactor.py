"""The Compactor: the effectful Compact phase before every model call, deciding between Micro
and Full on each pressure sample, and `/compact`."""

from __future__ import annotations

from collections.abc import AsyncIterator

from peri_cli.agent.compaction.config import CompactConfig
from peri_cli.agent.compaction.full import SUMMARY_ATTEMPTS, Full, FullOutcome
from peri_cli.agent.compaction.gauge import Gauge
from peri_cli.agent.compaction.micro import MicroStep
from peri_cli.agent.compaction.port import CompactionContext
from peri_cli.base.events import CompactWarning, Event, TurnEnded
from peri_cli.context.pressure import Pressure
from peri_cli.context.tokens import TokenCounter, default_counter

STALL_LIMIT = 2  # automatic Full compactions in a row that stay over the threshold


class Compactor:
    """The Compact phase of the loop: measures pressure, runs Micro and Full, reports events.

    `before_request(agent)` runs before every model call; `compact_now(agent, focus)` is
    `/compact [focus]`. Both are async generators of events and never edit a stored message.
    Micro appends a `ProjectionEntry` of directives that `projection.project` applies to copies
    on every request; Full appends a summary message, a `CompactBoundary` that excludes everything
    before it, and a message re-injecting the current content of files that were read. A pressure
    sample (one provider usage report plus what was added since) drives at most one automatic
    compaction, so Micro and Full cannot alternate on stale data.
    """

    def __init__(
        self,
        config: CompactConfig | None = None,
        *,
        counter: TokenCounter | None = None,
        summary_attempts: int = SUMMARY_ATTEMPTS,
    ) -> None:
        self.config = config or CompactConfig()
        self.counter = counter or default_counter()
        self.gauge = Gauge(self.counter, self.config.context_window)
        self.micro = MicroStep(self.config, self.counter)
        self.full = Full(self.config, self.gauge, summary_attempts)
        self._last_key: tuple[str, str] | None = None  # the sample last acted on
        self._warned = False
        self._stalls = 0  # automatic Full compactions in a row that stayed over the threshold

    def pressure(self, agent: CompactionContext) -> Pressure:
        """The pressure the agent's next request puts on the window, as this Compactor sees it."""
        return self.gauge.pressure(agent)

    async def before_request(self, agent: CompactionContext) -> AsyncIterator[Event]:
        """Micro when pressure passes its threshold, Full when Micro cannot get under the Full
        threshold; at most one automatic decision per pressure sample."""
        cfg = self.config
        if cfg.disable_compact:
            return
        lowest = min(cfg.micro_threshold, cfg.full_threshold - cfg.warn_margin)
        request = agent.build_request()
        if self.gauge.clearly_below(agent, request, lowest):
            self._warned, self._stalls = False, 0
            return
        sample = self.gauge.pressure(agent, request)
        if sample.key == self._last_key:
            return  # this sample has been acted on already
        self._last_key = sample.key
        tokens, window = sample.tokens, sample.window
        auto_full = not cfg.disable_auto_compact
        if sample.ratio < cfg.full_threshold:
            self._stalls = 0
        micro = self.micro
        plan = micro.plan(agent, tokens, window) if sample.ratio >= cfg.micro_threshold else None
        # Micro when it takes a large step (to below the middle of the low-water mark and its
        # threshold), or as far as it can when automatic Full is off. A small step would move the
        # cached prefix again on the next request or two; instead, wait for the Full threshold,
        # where inside one long turn any step that gets under it comes before a summary
        # (`MicroStep.worth_it`).
        if plan is not None and (not auto_full or micro.worth_it(plan, tokens, window)):
            compacted = micro.commit(agent, plan, tokens)
            tokens = compacted.tokens_after if compacted.tokens_after is not None else tokens
            self._warned = False
            yield compacted
        ratio = tokens / window
        if not auto_full:
            return
        if ratio < cfg.full_threshold - cfg.warn_margin:
            self._warned = False
        elif not self._warned:
            self._warned = True
            yield CompactWarning(ratio, cfg.full_threshold)
        if ratio >= cfg.full_threshold:
            async for event in self._auto_full(agent, tokens):
                yield event

    async def _auto_full(self, agent: CompactionContext, tokens: int) -> AsyncIterator[Event]:
        """Full until pressure is under the threshold; a stall (the fixed part alone is too big)
        ends the turn rather than compacting in a loop."""
        cfg = self.config
        while True:
            outcome = FullOutcome()
            async for event in self.full.run(agent, None, tokens, outcome, "auto"):
                yield event
            if not outcome.ok:
                return  # reported as CompactFailed; history untouched
            self._warned = False
            sample = self.gauge.pressure(agent)
            self._last_key = sample.key
            if sample.ratio < cfg.full_threshold:
                self._stalls = 0
                return
            self._stalls += 1
            if self._stalls >= STALL_LIMIT:
                yield TurnEnded(
                    "compact_stalled",
                    f"the context is still {sample.ratio:.0%} full after {self._stalls} "
                    f"compactions in a row (threshold {cfg.full_threshold:.0%} of "
                    f"{sample.window:,} tokens): the system prompt, tool schemas and the latest "
                    "messages alone are too big. Use /clear, or a model with a larger window.",
                )
                return
            tokens = sample.tokens

    async def after_overflow(self, agent: CompactionContext) -> AsyncIterator[Event]:
        """The provider refused a request as longer than the model's window, which Peri's count
        did not foresee: one automatic Full (none while compaction or automatic Full is off)."""
        cfg = self.config
        if cfg.disable_compact or cfg.disable_auto_compact:
            return
        outcome = FullOutcome()
        tokens = self.gauge.pressure(agent).tokens
        async for event in self.full.run(agent, None, tokens, outcome, "auto"):
            yield event
        if outcome.ok:
            self._warned = False
            self._last_key = self.gauge.pressure(agent).key  # this sample is acted on

    async def compact_now(
        self, agent: CompactionContext, focus: str | None = None
    ) -> AsyncIterator[Event]:
        """`/compact [focus]`: a Full compact now, whatever the pressure and settings."""
        outcome = FullOutcome()
        tokens = self.gauge.pressure(agent).tokens
        async for event in self.full.run(agent, focus, tokens, outcome, "manual"):
            yield event
        if outcome.ok:
            self._warned = False
