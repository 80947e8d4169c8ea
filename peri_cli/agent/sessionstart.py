"""SessionStart hooks: run when a session starts, resumes, is cleared or compacted (as in Claude
Code). What they print as context waits in the agent's inbox for the next Receive; what they
have to tell the user comes back as notices. They cannot block."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from peri_cli.base.events import Notice
from peri_cli.extensions.hookpoints import notices

if TYPE_CHECKING:
    from peri_cli.extensions.hookpoints import Hooks
    from peri_cli.extensions.hooks import SessionStartSource


class StartingAgent(Protocol):
    """What SessionStart needs of an agent: its hooks, and the inbox their context waits in."""

    @property
    def hooks(self) -> Hooks | None: ...
    @property
    def inbox(self) -> list[str]: ...


def session_context(text: str) -> str:
    return f"[Context from a SessionStart hook]\n{text}"


def has_session_start(hooks: Hooks | None) -> bool:
    return hooks is not None and hooks.has("SessionStart")


async def run_session_start(
    hooks: Hooks | None, inbox: list[str], source: SessionStartSource
) -> list[Notice]:
    """Run the SessionStart hooks that match `source`; their context goes to `inbox`."""
    if hooks is None or not hooks.has("SessionStart"):
        return []
    outcome = await hooks.run("SessionStart", source=source)
    inbox.extend(session_context(text) for text in outcome.context if text.strip())
    return notices(outcome)


async def session_start_events(
    agent: StartingAgent, source: SessionStartSource
) -> AsyncIterator[Notice]:
    """The same as events, for whoever shows an agent's events (the TUI's bridge)."""
    for notice in await run_session_start(agent.hooks, agent.inbox, source):
        yield notice
