"""Full compaction's run: summarize the visible history with a tool-less request shrunk to fit
the window, then commit summary, boundary and re-injected files together, or change nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from peri_cli.agent.compaction.gauge import prefix_note
from peri_cli.agent.compaction.keep import working_state_entry
from peri_cli.agent.sessionstart import run_session_start
from peri_cli.base.events import Compacted, CompactFailed, Event, UsageSpent
from peri_cli.base.messages import Message, Usage, user_text
from peri_cli.base.provider import MessageCompleted, ModelRequest, ProviderError
from peri_cli.base.retry import Retrying, stream_with_retries
from peri_cli.context.micro import ORIGIN_REINJECT, ORIGIN_SUMMARY
from peri_cli.context.projection import project, visible_entries
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
from peri_cli.extensions.hookpoints import notices
from peri_cli.session.transcript import CompactBoundary, Entry, MessageEntry
from peri_cli.session.turns import origin_of

if TYPE_CHECKING:
    from peri_cli.agent.compaction.config import CompactConfig
    from peri_cli.agent.compaction.gauge import Gauge
    from peri_cli.agent.compaction.port import CompactionContext
    from peri_cli.extensions.hooks import CompactTrigger

SUMMARY_ATTEMPTS = 3  # one try plus two retries of an empty summary
REINJECT_MAX_TOKENS = 20_000
REINJECT_WINDOW_SHARE = 0.10
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


@dataclass
class FullOutcome:
    """What the caller of a run learns besides its events: whether it committed, and the
    pressure it left."""

    ok: bool = False
    tokens_after: int | None = None


class Full:
    """Runs Full compactions for one Compactor's configuration and gauge."""

    def __init__(
        self, config: CompactConfig, gauge: Gauge, summary_attempts: int = SUMMARY_ATTEMPTS
    ) -> None:
        self.config = config
        self.gauge = gauge
        self.summary_attempts = summary_attempts

    async def run(
        self,
        agent: CompactionContext,
        focus: str | None,
        tokens_before: int | None,
        outcome: FullOutcome,
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
        failure: list[str] = []
        summary = ""
        async for item in self._summarize(agent, self._summary_request(agent, focus), failure):
            if isinstance(item, str):
                summary = item
            else:
                yield item
        if not summary:
            yield CompactFailed(failure[0] if failure else "no summary")
            return
        yield self._commit(
            agent,
            summary,
            entries=entries,
            excluded=excluded,
            focus=focus,
            tokens_before=tokens_before,
            outcome=outcome,
        )
        for notice in await run_session_start(agent.hooks, agent.inbox, "compact"):
            yield notice

    def _commit(
        self,
        agent: CompactionContext,
        summary: str,
        *,
        entries: Sequence[Entry],
        excluded: Sequence[MessageEntry],
        focus: str | None,
        tokens_before: int | None,
        outcome: FullOutcome,
    ) -> Compacted:
        """Append summary, boundary and re-injection in one write, the boundary carrying the
        pressure they leave."""
        summary_entry, n_texts = self._summary_entry(agent, summary, excluded)
        boundary = CompactBoundary(
            summary_id=summary_entry.id,
            focus=focus or None,
            tokens_before=tokens_before,
            excluded_messages=len(excluded),
        )
        added: list[Entry] = [summary_entry, boundary]
        window = self.gauge.window(agent)
        kept = working_state_entry(
            agent, excluded, window=window, count=self.gauge.counter.count_text
        )
        if kept is not None:  # the first message after the summary
            added.append(kept)
        text, n_files = self._reinjection(agent, excluded)
        if text:
            added.append(
                MessageEntry.model_validate({"message": user_text(text), "origin": ORIGIN_REINJECT})
            )
        after_view = project([*entries, *added])
        changed = self.gauge.counter.count_messages(after_view)  # no message survives a Full
        tokens_after = self.gauge.base_tokens(agent.build_request()) + changed
        added[1] = boundary.model_copy(update={"tokens_after": tokens_after})
        agent.session.append(*added)
        outcome.ok, outcome.tokens_after = True, tokens_after
        detail = f"summarized {len(excluded)} messages"
        if n_texts:
            detail += f"; kept {n_texts} user message{'s' if n_texts > 1 else ''} verbatim"
        if kept is not None:
            detail += "; kept the working state"
        if n_files:
            detail += f"; re-injected {n_files} file{'s' if n_files > 1 else ''}"
        if focus:
            detail += f"; focus: {focus}"
        if tokens_before is not None:
            detail += f"; {prefix_note(tokens_before - tokens_after, changed, tokens_after)}"
        return Compacted(
            "full",
            tokens_before,
            tokens_after,
            len(excluded),
            detail=detail,
            prefix_changed=changed,
        )

    def _summary_request(self, agent: CompactionContext, focus: str | None) -> ModelRequest:
        """The tool-less summary request, shrunk to fit the window: tool inputs and results are
        summarised, not quoted, so they are cut first; then long texts; then the oldest messages
        are left out."""
        window = self.gauge.window(agent)
        count = self.gauge.counter.count_messages
        base = agent.build_request(tools=False)
        max_out = min(agent.max_tokens, max(512, window // 4))
        budget = min(int((window - max_out) * 0.95), int(window * SUMMARY_INPUT_SHARE))
        view = base.messages
        instruction = instruction_for(focus)
        fixed = self.gauge.base_tokens(base)
        files = {
            id(p)
            for e in visible_entries(agent.session.entries)
            if origin_of(e) == ORIGIN_REINJECT
            for p in e.message.content
        }
        attempt = base
        for caps in SUMMARY_CAPS:
            attempt = _summary_attempt(base, view, instruction, max_out, caps, files=files)
            if fixed + count(attempt.messages) <= budget:
                return attempt
        skip = 0
        while skip < len(view) - 1:  # everything is as short as it gets: leave out the oldest
            skip += max(1, (len(view) - skip) // 2)
            attempt = _summary_attempt(
                base, view, instruction, max_out, SUMMARY_CAPS[-1], files=files, skip=skip
            )
            if fixed + count(attempt.messages) <= budget:
                break
        return attempt

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
        """The current content of files the excluded history read, within its budget, and how
        many files it carries."""
        window = self.gauge.window(agent)
        budget = min(REINJECT_MAX_TOKENS, int(window * REINJECT_WINDOW_SHARE))
        contents: list[tuple[str, str]] = []
        for path in files_read(excluded)[:REINJECT_MAX_FILES]:
            text = read_current(agent.tool_ctx.resolve(path))
            if text is not None:
                contents.append((path, text or "(the file is empty)\n"))
        text = reinjection_text(
            contents, skills_used(excluded), budget=budget, count=self.gauge.counter.count_text
        )
        return text, text.count('<file path="')

    def _summary_entry(
        self, agent: CompactionContext, summary: str, excluded: Sequence[MessageEntry]
    ) -> tuple[MessageEntry, int]:
        """The message standing for the excluded history: the summary, then what the user typed
        (verbatim, newest first within the budget), so no fact or instruction of theirs is lost
        to a summary that forgot it. Returns it and how many of the user's texts it carries."""
        cfg = self.config
        count = self.gauge.counter.count_text
        budget = min(cfg.user_text_max_tokens, int(self.gauge.window(agent) * cfg.user_text_budget))
        texts = typed_texts(excluded)
        kept = keep_typed(texts, budget=budget, count=count)
        block = user_texts_block(kept, len(texts) - len(kept))
        entry = MessageEntry.model_validate(
            {
                "message": user_text(continuation_text(summary, block)),
                "origin": ORIGIN_SUMMARY,
                USER_TEXTS_KEY: kept,
            }
        )
        return entry, len(kept)


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
    """One try at the summary request: tool blocks and texts cut to `caps`, `skip` oldest
    messages left out; re-injected file texts (by part id) are cut like tool results."""
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
