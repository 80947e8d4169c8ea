"""The `# Skills` section of the frozen prompt: each skill the model may load, by name and
description, within a share of the context window."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from peri_cli.base.textsafe import visible
from peri_cli.context.estimate import estimate_tokens
from peri_cli.extensions.skills.catalog import SkillCatalog

LISTING_SHARE = 0.02  # of the context window, for the listing in the frozen prompt
MIN_LISTED_DESCRIPTION = 40  # below this, names alone are listed
MAX_LISTED_DESCRIPTION = 2000

LISTING_HEADING = "# Skills"
LISTING_INTRO = (
    "Skills hold instructions for particular tasks. When one applies, load it with the Skill "
    "tool before you act; files it mentions sit beside its SKILL.md."
)


@dataclass(frozen=True)
class SkillListing:
    """The `# Skills` section of the frozen prompt ("" when no skill is offered to the model)."""

    text: str
    shown: tuple[str, ...] = ()
    shortened: int = 0
    omitted: int = 0


def skill_listing(
    catalog: SkillCatalog,
    context_window: int,
    *,
    count: Callable[[str], int] = estimate_tokens,
    share: float = LISTING_SHARE,
) -> SkillListing:
    """Name and description of each skill the model may load, within `share` of the window in
    tokens: the longest descriptions are shortened first, then (rarely) descriptions dropped,
    then skills, each step said in a note."""
    skills = catalog.for_model()
    if not skills:
        return SkillListing("")
    budget = max(1, int(context_window * share))
    names = [s.name for s in skills]
    full = [_one_line(s.description) for s in skills]
    descriptions = [_shorten(d, MAX_LISTED_DESCRIPTION) for d in full]

    def render(limit: int | None, keep: int) -> tuple[str, int]:
        shown = [_shorten(d, limit) for d in descriptions[:keep]]
        cut = sum(1 for s, d in zip(shown, full, strict=False) if s != d)
        return _render_listing(names[:keep], shown, cut, len(names) - keep, limit == 0), cut

    text, cut = render(None, len(names))
    if count(text) <= budget:
        return SkillListing(text, tuple(names), shortened=cut)
    longest = max(len(d) for d in descriptions)
    limit = _largest(
        MIN_LISTED_DESCRIPTION, longest, lambda n: count(render(n, len(names))[0]) <= budget
    )
    if limit is not None:
        text, cut = render(limit, len(names))
        return SkillListing(text, tuple(names), shortened=cut)
    keep = _largest(0, len(names), lambda k: count(render(0, k)[0]) <= budget) or 0
    text, cut = render(0, keep)
    return SkillListing(text, tuple(names[:keep]), shortened=cut, omitted=len(names) - keep)


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int | None:
    """The largest n in [low, high] for which `fits(n)` (monotone), or None if not even `low`."""
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _one_line(text: str) -> str:
    return visible(" ".join(text.split()))


def _shorten(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    if limit == 0:
        return ""
    return text[: limit - 1].rstrip() + "…"


def _render_listing(
    names: list[str], descriptions: list[str], cut: int, omitted: int, names_only: bool
) -> str:
    lines = [LISTING_HEADING, LISTING_INTRO]
    lines += [f"- {n}: {d}" if d else f"- {n}" for n, d in zip(names, descriptions, strict=True)]
    if names_only:
        lines.append(
            "(Descriptions are left out for space; the Skill tool returns a skill's text.)"
        )
    elif cut:
        lines.append(
            f"({cut} description{'s were' if cut > 1 else ' was'} shortened to fit; "
            "the Skill tool returns a skill's full text.)"
        )
    if omitted:
        lines.append(f"({omitted} more skills are installed but not listed, for space.)")
    return "\n".join(lines)
