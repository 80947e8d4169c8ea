"""What fills the context window, by tokens: the numbers behind `/context` and the status bar."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from peri_cli.agent.loop import Agent
from peri_cli.base.provider import ModelRequest
from peri_cli.context.levels import Levels
from peri_cli.context.tokens import TokenCounter

GUIDE_HEADING = "# Project guide"
SKILLS_HEADING = "# Skills"


@dataclass(frozen=True)
class ContextPart:
    label: str
    tokens: int


@dataclass(frozen=True)
class ContextReport:
    parts: list[ContextPart]
    window: int
    messages: int
    # Share of input tokens the provider read from its prompt cache, over the session's requests
    # after the first (None: no cache figures reported).
    stable_share: float | None = None
    stable_requests: int = 0
    # What Micro's two levels (results cut, results as notes) hold in the view and freed.
    levels: Levels | None = None

    @property
    def total(self) -> int:
        return sum(p.tokens for p in self.parts)


def split_frozen(system: str) -> tuple[str, str, str]:
    """(base prompt, project guide, skill summary) sections of the frozen system prompt."""
    sections = system.split("\n\n# ")
    base, guide, skills = [], [], []
    for i, section in enumerate(sections):
        text = section if i == 0 else "# " + section
        if text.startswith(GUIDE_HEADING):
            guide.append(text)
        elif text.startswith(SKILLS_HEADING):
            skills.append(text)
        elif guide and not skills and not text.startswith("# Environment"):
            guide.append(text)  # a heading inside the guide text belongs to the guide
        else:
            base.append(text)
    return "\n\n".join(base), "\n\n".join(guide), "\n\n".join(skills)


def report(request: ModelRequest, counter: TokenCounter, window: int) -> ContextReport:
    base, guide, skills = split_frozen(request.frozen_system)
    tools = counter.count_text(json.dumps([t.__dict__ for t in request.tools], default=str))
    parts = [
        ContextPart("Frozen prompt", counter.count_text(base)),
        ContextPart("Project guide", counter.count_text(guide)),
        ContextPart("Skills", counter.count_text(skills)),
        ContextPart("Tools", tools if request.tools else 0),
        ContextPart("Contributions", counter.count_text(request.dynamic_system)),
        ContextPart("History", counter.count_messages(request.messages)),
    ]
    return ContextReport(parts, window, len(request.messages))


def agent_report(agent: Agent, counter: TokenCounter, window: int) -> ContextReport:
    from peri_cli.context.levels import projection_levels
    from peri_cli.context.pressure import stable_prefix_share
    from peri_cli.context.projection import visible_entries
    from peri_cli.context.workstate import state_tokens

    share = stable_prefix_share(agent.session.entries)
    base = report(agent.build_request(), counter, window)
    kept = state_tokens(visible_entries(agent.session.entries), counter.count_message)
    history = base.parts[-1]
    parts = [
        *base.parts[:-1],
        ContextPart("Working state", min(kept, history.tokens)),
        ContextPart(history.label, max(0, history.tokens - kept)),
    ]
    return dataclasses.replace(
        base,
        parts=parts,
        stable_share=share.share,
        stable_requests=share.requests,
        levels=projection_levels(agent.session.entries, counter.count_message),
    )


def estimate_request(agent: Agent, counter: TokenCounter) -> int:
    """Tokens the next request would put in the window, estimated."""
    return agent_report(agent, counter, 0).total
