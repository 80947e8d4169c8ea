"""The Compactor: the effectful Compact phase, committing Micro directives and Full summaries."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from peri_cli.agent.sessionstart import run_session_start
from peri_cli.base.events import (
    Compacted,
    CompactFailed,
    CompactWarning,
    Event,
    TurnEnded,
    UsageSpent,
)
from peri_cli.base.messages import Message, Usage, user_text
from peri_cli.base.models import context_window
from peri_cli.base.provider import MessageCompleted, ModelRequest, ProviderError
from peri_cli.base.retry import Retrying, stream_with_retries
from peri_cli.context.micro import ORIGIN_REINJECT, ORIGIN_SUMMARY, _json, plan_micro
from peri_cli.context.pressure import (
    Pressure,
    _last_usage,
    measure_pressure,
    reported_usage,
    token_bound,
    usage_estimated,
)
from peri_cli.context.projection import (
    CACHE_MARK_KEY,
    Directive,
    active_directives,
    dump_directives,
    project,
    render_message,
    visible_entries,
)
from peri_cli.context.summary import (
    REINJECT_MAX_FILES,
    USER_TEXTS_KEY,
    continuation_text,
    extract_summary,
    files_read,
    instruction_for,
    keep_typed,
    read_current,
    reinjection_text,
    skills_used,
    summary_messages,
    typed_texts,
    user_texts_block,
)
from peri_cli.context.tokens import RATIO_MAX, TokenCounter, default_counter
from peri_cli.extensions.hookpoints import notices
from peri_cli.session.transcript import CompactBoundary, Entry, MessageEntry, ProjectionEntry
from peri_cli.session.turns import origin_of

if TYPE_CHECKING:
    from peri_cli.base.provider import Provider
    from peri_cli.base.settings import Settings
    from peri_cli.base.tool import ToolContext
    from peri_cli.extensions.hookpoints import Hooks
    from peri_cli.extensions.hooks import CompactTrigger
    from peri_cli.session.store import Session


class CompactionContext(Protocol):
    """What compaction needs of the agent it compacts for, and no more."""

    @property
    def session(self) -> Session: ...

    @property
    def model(self) -> str: ...

    @property
    def provider(self) -> Provider: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def retry_max_wait(self) -> float: ...

    @property
    def tool_ctx(self) -> ToolContext: ...

    @property
    def hooks(self) -> Hooks | None: ...  # PreCompact and SessionStart("compact") hooks

    @property
    def inbox(self) -> list[str]: ...  # where a SessionStart hook's context waits

    def view(self) -> list[Message]: ...

    def build_request(self, *, tools: bool = True) -> ModelRequest: ...


WARN_MARGIN = 0.05  # warn when pressure is this close below the Full threshold
SUMMARY_ATTEMPTS = 3  # one try plus two retries of an empty summary
STALL_LIMIT = 2  # automatic Full compactions in a row that stay over the threshold
REINJECT_MAX_TOKENS = 20_000
REINJECT_WINDOW_SHARE = 0.10


# --- configuration ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactConfig:
    """Thresholds, targets and budgets; the shares are of the context window."""

    micro_threshold: float = 0.75
    full_threshold: float = 0.95
    # Micro frees down to this share (hysteresis): every projection rewrites the cached prefix
    # from the first changed message on, so it acts rarely and in large steps.
    micro_low_water: float = 0.2
    protected_turns: int = 3
    protected_turns_budget: float = 0.25  # the last turns are protected up to this share
    keep_results: int = 3  # the newest tool results that are always whole
    keep_chars: int = 200
    user_text_budget: float = 0.10  # Full keeps the user's typed words up to this share ...
    user_text_max_tokens: int = 20_000  # ... and at most this many tokens
    disable_compact: bool = False  # no automatic compaction at all; /compact still works
    disable_auto_compact: bool = False  # no automatic Full; Micro still runs
    context_window: int | None = None  # override of the model's known window
    warn_margin: float = WARN_MARGIN

    @classmethod
    def from_settings(cls, settings: Settings) -> CompactConfig:
        """From resolved settings (env and COMPACT_THRESHOLD already applied).

        `smart_compact_enabled` is a legacy switch that meant "Micro": Micro is always on unless
        compaction is disabled, so it changes nothing here.
        """
        c = settings.compact
        return cls(
            micro_threshold=c.micro_compact_threshold,
            full_threshold=c.auto_compact_threshold,
            micro_low_water=c.micro_low_water,
            protected_turns=c.protected_turns,
            protected_turns_budget=c.protected_turns_budget,
            keep_results=c.keep_tool_results,
            keep_chars=c.tool_result_keep_chars,
            user_text_budget=c.user_text_budget,
            user_text_max_tokens=c.user_text_max_tokens,
            disable_compact=settings.disable_compact,
            disable_auto_compact=settings.disable_auto_compact,
            context_window=settings.context_window,
        )


# --- the Compactor ----------------------------------------------------------------------------


def _base_texts(request: ModelRequest) -> tuple[str, str, str]:
    """What a request carries besides its messages: system prompt parts and tool schemas."""
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]
    return request.frozen_system, request.dynamic_system, _json(tools) if tools else ""


@dataclass(frozen=True)
class _MicroPlan:
    directives: list[Directive]
    freed: int  # tokens, measured by rendering the affected messages before and after
    changed: int  # messages whose rendered copy changes
    first: int  # index of the first view message that changes
    rewrite: int  # tokens of the view from that message on: what the prompt cache writes again


@dataclass
class _Outcome:
    ok: bool = False
    tokens_after: int | None = None


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
        self.summary_attempts = summary_attempts
        self._last_key: tuple[str, str] | None = None  # the sample last acted on
        self._calibrated: str | None = None  # usage entry id last used for calibration
        self._warned = False
        self._stalls = 0  # automatic Full compactions in a row that stayed over the threshold
        self._raw_texts: dict[str, int] = {}

    # measuring

    def window(self, agent: CompactionContext) -> int:
        return context_window(agent.model, self.config.context_window)

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

    # the Compact phase

    async def before_request(self, agent: CompactionContext) -> AsyncIterator[Event]:
        """Micro when pressure passes its threshold, Full when Micro cannot get under the Full
        threshold; at most one automatic decision per pressure sample."""
        cfg = self.config
        if cfg.disable_compact:
            return
        lowest = min(cfg.micro_threshold, cfg.full_threshold - cfg.warn_margin)
        request = agent.build_request()
        if self.clearly_below(agent, request, lowest):
            self._warned, self._stalls = False, 0
            return
        sample = self.pressure(agent, request)
        if sample.key == self._last_key:
            return  # this sample has been acted on already
        self._last_key = sample.key
        tokens, window = sample.tokens, sample.window
        auto_full = not cfg.disable_auto_compact
        if sample.ratio < cfg.full_threshold:
            self._stalls = 0
        plan = self._plan(agent, tokens, window) if sample.ratio >= cfg.micro_threshold else None
        # Micro when it takes a large step (to below the middle of the low-water mark and its
        # threshold), or as far as it can when automatic Full is off. A small step would move the
        # cached prefix again on the next request or two; instead, wait for the Full threshold.
        if plan is not None and (not auto_full or self._worth_it(plan, tokens, window)):
            compacted = self._commit_micro(agent, plan, tokens)
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
        cfg = self.config
        while True:
            outcome = _Outcome()
            async for event in self._full(agent, None, tokens, outcome, "auto"):
                yield event
            if not outcome.ok:
                return  # reported as CompactFailed; history untouched
            self._warned = False
            sample = self.pressure(agent)
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

    async def compact_now(
        self, agent: CompactionContext, focus: str | None = None
    ) -> AsyncIterator[Event]:
        """`/compact [focus]`: a Full compact now, whatever the pressure and settings."""
        outcome = _Outcome()
        tokens = self.pressure(agent).tokens
        async for event in self._full(agent, focus, tokens, outcome, "manual"):
            yield event
        if outcome.ok:
            self._warned = False

    # Micro

    def _worth_it(self, plan: _MicroPlan, tokens: int, window: int) -> bool:
        """A large step: pressure ends at most halfway between the low-water mark and the Micro
        threshold. Every step rewrites the cached prefix from its first changed message (the
        protected tail included), so small steps cost more than they save; measured in
        bench/compaction_window.py."""
        cfg = self.config
        low = min(cfg.micro_low_water, cfg.micro_threshold)
        return tokens - plan.freed <= int((low + cfg.micro_threshold) / 2 * window)

    def _plan(self, agent: CompactionContext, tokens: int, window: int) -> _MicroPlan | None:
        """Directives that bring pressure down to the low-water mark (as far as protection
        allows), oldest unprojected parts first; None if nothing helps."""
        cfg = self.config
        entries = agent.session.entries
        target = int(min(cfg.micro_low_water, cfg.micro_threshold) * window)
        already = {d.key for ds in active_directives(entries).values() for d in ds}
        directives = plan_micro(
            visible_entries(entries),
            tokens - target,
            keep_turns=cfg.protected_turns,
            keep_chars=cfg.keep_chars,
            keep_results=cfg.keep_results,
            turn_budget=int(cfg.protected_turns_budget * window),
            already=already,
            count=self.counter.count_text,
        )
        if not directives:
            return None
        freed, changed = self._freed(entries, directives)
        if not changed:
            return None
        before = agent.view()
        after = project([*entries, ProjectionEntry(directives=dump_directives(directives))])
        first = next(
            (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
            min(len(before), len(after)),
        )
        rewrite = self.counter.count_messages(after[first:])
        return _MicroPlan(directives, freed, changed, first, rewrite)

    def _freed(self, entries: Sequence[Entry], new: Sequence[Directive]) -> tuple[int, int]:
        """Tokens freed by adding `new` to the directives in force, and messages changed."""
        current = active_directives(entries)
        by_id = {e.id: e for e in visible_entries(entries)}
        freed = changed = 0
        for mid in dict.fromkeys(d.message_id for d in new):
            entry = by_id.get(mid)
            if entry is None:
                continue
            old_ds = current.get(mid, [])
            keys = {d.key for d in old_ds}
            added = [d for d in new if d.message_id == mid and d.key not in keys]
            before = render_message(entry.message, old_ds)
            after = render_message(entry.message, [*old_ds, *added])
            if after != before:
                changed += 1
                freed += self.counter.count_message(before) - self.counter.count_message(after)
        return freed, changed

    def _commit_micro(self, agent: CompactionContext, plan: _MicroPlan, tokens: int) -> Compacted:
        after = tokens - plan.freed
        fields: dict[str, object] = {
            "directives": dump_directives(plan.directives),
            "tokens_before": tokens,
            "tokens_after": after,
        }
        # The next request is worth a cache breakpoint on the last message left unchanged: the
        # provider finds the prefix it cached before this projection however far back it is.
        if plan.first > 0:
            fields[CACHE_MARK_KEY] = plan.first - 1
        agent.session.append(ProjectionEntry.model_validate(fields))
        kinds = sorted({d.kind for d in plan.directives})
        detail = (
            f"{len(plan.directives)} directives ({', '.join(kinds)}); "
            f"{_prefix_note(plan.freed, plan.rewrite, after)}"
        )
        return Compacted(
            "micro", tokens, after, plan.changed, detail=detail, prefix_changed=plan.rewrite
        )

    # Full

    def _summary_request(self, agent: CompactionContext, focus: str | None) -> ModelRequest:
        """The tool-less summary request, shrunk to fit the window: tool inputs and results are
        summarised, not quoted, so they are cut first; then long texts; then the oldest messages
        are left out."""
        window = self.window(agent)
        base = agent.build_request(tools=False)
        max_out = min(agent.max_tokens, max(512, window // 4))
        budget = min(int((window - max_out) * 0.95), int(window * SUMMARY_INPUT_SHARE))
        view = base.messages
        instruction = instruction_for(focus)
        fixed = self.base_tokens(base)
        files = {
            id(p)
            for e in visible_entries(agent.session.entries)
            if origin_of(e) == ORIGIN_REINJECT
            for p in e.message.content
        }
        attempt = base
        for caps in SUMMARY_CAPS:
            attempt = self._summary_attempt(base, view, instruction, max_out, caps, files=files)
            if fixed + self.counter.count_messages(attempt.messages) <= budget:
                return attempt
        skip = 0
        while skip < len(view) - 1:  # everything is as short as it gets: leave out the oldest
            skip += max(1, (len(view) - skip) // 2)
            attempt = self._summary_attempt(
                base, view, instruction, max_out, SUMMARY_CAPS[-1], files=files, skip=skip
            )
            if fixed + self.counter.count_messages(attempt.messages) <= budget:
                break
        return attempt

    @staticmethod
    def _summary_attempt(
        base: ModelRequest,
        view: Sequence[Message],
        instruction: str,
        max_out: int,
        caps: tuple[int, int | None],
        *,
        files: Collection[int],
        skip: int = 0,
    ) -> ModelRequest:
        result_chars, text_chars = caps
        messages = summary_messages(
            view,
            instruction,
            result_chars=result_chars,
            text_chars=text_chars,
            skip=skip,
            file_texts=files,
        )
        return dataclasses.replace(
            base, messages=messages, tools=[], max_tokens=max_out, cache_marks=()
        )

    async def _summarize(
        self, agent: CompactionContext, request: ModelRequest, failure: list[str]
    ) -> AsyncIterator[Event | str]:
        """Yield retry events and finally the summary text; on failure append why to `failure`."""
        for _ in range(self.summary_attempts):
            completed: MessageCompleted | None = None
            try:
                retrying = stream_with_retries(
                    agent.provider, request, max_wait=agent.retry_max_wait
                )
                async for event in retrying:
                    if isinstance(event, MessageCompleted):
                        completed = event
                    elif isinstance(event, Retrying):
                        yield event
            except ProviderError as e:
                failure.append(f"the summary request failed: {e}")
                return
            if completed is None:
                failure.append("the summary request ended without a reply")
                return
            usage: Usage | None = completed.usage
            if usage is not None:  # a provider may report none
                yield UsageSpent(usage)
            if completed.stop_reason != "end_turn":
                failure.append(
                    f"the summary did not finish normally (stop reason {completed.stop_reason})"
                )
                return
            summary = extract_summary(completed.message.text)
            if summary:
                yield summary
                return
        failure.append(f"the model returned an empty summary {self.summary_attempts} times")

    def _reinjection(
        self, agent: CompactionContext, excluded: Sequence[MessageEntry]
    ) -> tuple[str, int]:
        window = self.window(agent)
        budget = min(REINJECT_MAX_TOKENS, int(window * REINJECT_WINDOW_SHARE))
        contents: list[tuple[str, str]] = []
        for path in files_read(excluded)[:REINJECT_MAX_FILES]:
            text = read_current(agent.tool_ctx.resolve(path))
            if text is not None:
                contents.append((path, text or "(the file is empty)\n"))
        text = reinjection_text(
            contents, skills_used(excluded), budget=budget, count=self.counter.count_text
        )
        return text, text.count('<file path="')

    def _summary_entry(
        self, agent: CompactionContext, summary: str, excluded: Sequence[MessageEntry]
    ) -> tuple[MessageEntry, int]:
        """The message standing for the excluded history: the summary, then what the user typed
        (verbatim, newest first within the budget), so no fact or instruction of theirs is lost
        to a summary that forgot it. Returns it and how many of the user's texts it carries."""
        cfg = self.config
        budget = min(cfg.user_text_max_tokens, int(self.window(agent) * cfg.user_text_budget))
        texts = typed_texts(excluded)
        kept = keep_typed(texts, budget=budget, count=self.counter.count_text)
        block = user_texts_block(kept, len(texts) - len(kept))
        entry = MessageEntry.model_validate(
            {
                "message": user_text(continuation_text(summary, block)),
                "origin": ORIGIN_SUMMARY,
                USER_TEXTS_KEY: kept,
            }
        )
        return entry, len(kept)

    async def _full(
        self,
        agent: CompactionContext,
        focus: str | None,
        tokens_before: int | None,
        outcome: _Outcome,
        trigger: CompactTrigger = "manual",
    ) -> AsyncIterator[Event]:
        """Summarize the visible history and commit summary, boundary and re-injection together,
        or change nothing and yield CompactFailed. PreCompact hooks run first (they cannot
        block), SessionStart hooks with source "compact" after a commit."""
        entries = list(agent.session.entries)
        excluded = visible_entries(entries)
        if not excluded:
            yield CompactFailed("nothing to compact: the visible history is empty")
            return
        if agent.hooks is not None:
            pre = await agent.hooks.run(
                "PreCompact", trigger=trigger, custom_instructions=focus or ""
            )
            for notice in notices(pre):
                yield notice
        request = self._summary_request(agent, focus)
        failure: list[str] = []
        summary = ""
        async for item in self._summarize(agent, request, failure):
            if isinstance(item, str):
                summary = item
            else:
                yield item
        if not summary:
            yield CompactFailed(failure[0] if failure else "no summary")
            return
        summary_entry, n_texts = self._summary_entry(agent, summary, excluded)
        boundary = CompactBoundary(
            summary_id=summary_entry.id,
            focus=focus or None,
            tokens_before=tokens_before,
            excluded_messages=len(excluded),
        )
        added: list[Entry] = [summary_entry, boundary]
        text, n_files = self._reinjection(agent, excluded)
        if text:
            added.append(
                MessageEntry.model_validate({"message": user_text(text), "origin": ORIGIN_REINJECT})
            )
        after_view = project([*entries, *added])
        changed = self.counter.count_messages(after_view)  # no message survives a Full
        tokens_after = self.base_tokens(agent.build_request()) + changed
        added[1] = boundary.model_copy(update={"tokens_after": tokens_after})
        agent.session.append(*added)
        outcome.ok, outcome.tokens_after = True, tokens_after
        detail = f"summarized {len(excluded)} messages"
        if n_texts:
            detail += f"; kept {n_texts} user message{'s' if n_texts > 1 else ''} verbatim"
        if n_files:
            detail += f"; re-injected {n_files} file{'s' if n_files > 1 else ''}"
        if focus:
            detail += f"; focus: {focus}"
        if tokens_before is not None:
            detail += f"; {_prefix_note(tokens_before - tokens_after, changed, tokens_after)}"
        yield Compacted(
            "full",
            tokens_before,
            tokens_after,
            len(excluded),
            detail=detail,
            prefix_changed=changed,
        )
        for notice in await run_session_start(agent.hooks, agent.inbox, "compact"):
            yield notice


# (tool input and result characters, other text characters) per attempt at fitting the summary
# request into the window; the first already cuts huge tool blocks (summarised, not quoted).
SUMMARY_CAPS: tuple[tuple[int, int | None], ...] = (
    (2_000, None),
    (1_000, None),
    (500, 40_000),
    (300, 8_000),
    (200, 2_000),
)
# A summary request (uncached: it carries no tools) uses at most this share of the window.
SUMMARY_INPUT_SHARE = 0.25


def _prefix_note(freed: int, changed: int, after: int) -> str:
    share = changed / after if after > 0 else 0.0
    return (
        f"freed {freed:,} tokens; the prompt-cache prefix changed for {changed:,} tokens "
        f"({share:.0%} of the next request)"
    )
