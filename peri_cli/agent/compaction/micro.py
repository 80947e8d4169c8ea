"""A Micro step, planned then committed: directives that bring pressure down to the low-water
mark, measured by rendering before and after, and appended as one `ProjectionEntry`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from peri_cli.agent.compaction.gauge import prefix_note
from peri_cli.base.events import Compacted
from peri_cli.context.directives import Directive, active_directives, dump_directives
from peri_cli.context.micro import plan_micro
from peri_cli.context.projection import CACHE_MARK_KEY, project, render_message, visible_entries
from peri_cli.session.transcript import Entry, ProjectionEntry
from peri_cli.session.turns import is_human_turn

if TYPE_CHECKING:
    from peri_cli.agent.compaction.config import CompactConfig
    from peri_cli.agent.compaction.port import CompactionContext
    from peri_cli.context.tokens import TokenCounter


@dataclass(frozen=True)
class MicroPlan:
    directives: list[Directive]
    freed: int  # tokens, measured by rendering the affected messages before and after
    changed: int  # messages whose rendered copy changes
    first: int  # index of the first view message that changes
    rewrite: int  # tokens of the view from that message on: what the prompt cache writes again
    one_turn: bool = False  # the view holds only the turn in progress: nothing to summarise


class MicroStep:
    """Plans and commits Micro steps for one Compactor's configuration and counter."""

    def __init__(self, config: CompactConfig, counter: TokenCounter) -> None:
        self.config = config
        self.counter = counter

    def large_step(self, window: int) -> int:
        """Where a large step ends: halfway between the low-water mark and the Micro threshold."""
        cfg = self.config
        low = min(cfg.micro_low_water, cfg.micro_threshold)
        return int((low + cfg.micro_threshold) / 2 * window)

    def worth_it(self, plan: MicroPlan, tokens: int, window: int) -> bool:
        """Whether to commit `plan` at this pressure, before Full is considered.

        Below the Full threshold only a large step is (pressure ends at `large_step`): every step
        rewrites the cached prefix from its first changed message (the protected tail included),
        so small steps cost more than they save; measured in bench/compaction_window.py. At or
        above it, inside one long turn, any plan that gets below the threshold is: a summary
        would fold away the turn's own work in progress. With earlier turns in the view Full
        still comes first there: it folds finished turns away and leaves far less than Micro's
        floor, which the 24-turn benchmark measured cheaper (0.42x against 0.55x)."""
        after = tokens - plan.freed
        full = int(self.config.full_threshold * window)
        if tokens >= full and plan.one_turn:
            return after < full
        return after <= self.large_step(window)

    def plan(self, agent: CompactionContext, tokens: int, window: int) -> MicroPlan | None:
        """Directives that bring pressure down to the low-water mark (as far as protection
        allows), oldest unprojected parts first; None if nothing helps."""
        cfg = self.config
        entries = agent.session.entries
        target = int(min(cfg.micro_low_water, cfg.micro_threshold) * window)
        view = visible_entries(entries)
        one_turn = sum(is_human_turn(e) for e in view) <= 1
        # Notes (the second level) only where a summary would come next inside one long turn,
        # and only as far as a large step needs: below the Full threshold, waiting costs less.
        must_free = 0
        if one_turn and tokens >= int(cfg.full_threshold * window):
            must_free = tokens - self.large_step(window)
        already = {d.key for ds in active_directives(entries).values() for d in ds}
        directives = plan_micro(
            view,
            tokens - target,
            keep_turns=cfg.protected_turns,
            keep_chars=cfg.keep_chars,
            keep_results=cfg.keep_results,
            turn_budget=int(cfg.protected_turns_budget * window),
            already=already,
            count=self.counter.count_text,
            must_free=must_free,
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
        return MicroPlan(directives, freed, changed, first, rewrite, one_turn)

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

    @staticmethod
    def commit(agent: CompactionContext, plan: MicroPlan, tokens: int) -> Compacted:
        """Append the plan's directives; the event reports what it freed and what it cost."""
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
            f"{prefix_note(plan.freed, plan.rewrite, after)}"
        )
        return Compacted(
            "micro", tokens, after, plan.changed, detail=detail, prefix_changed=plan.rewrite
        )
