"""When compaction acts and how far: thresholds, targets and budgets, read from settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peri_cli.base.settings import Settings

WARN_MARGIN = 0.05  # warn when pressure is this close below the Full threshold


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
