"""The proxy's question about a new domain as a PermissionRequested event, for the face that
answers events (the TUI's approval dialog): "always" (`allow_project`) keeps the domain in the
settings layer the answer names (`keep_in`: local, project or user; local when unset)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import get_args

from peri_cli.base.events import PermissionAnswer, PermissionRequested
from peri_cli.sandbox.gate import Always, Answer, Ask, Scope

NETWORK_TOOL = "Network"  # the name questions about domains carry (as can_use_tool sees it)
_ANSWERS: dict[PermissionAnswer, Answer] = {
    "allow": "allow",
    "allow_session": "allow",  # the gate keeps every answer for the session
    "allow_project": "always",
    "deny": "deny",
}
SCOPES: tuple[Scope, ...] = get_args(Scope)


def answer_of(event: PermissionRequested, answer: PermissionAnswer) -> Answer:
    """The gate's answer for the event's: "always" in the layer it names."""
    if answer == "allow_project" and event.keep_in in SCOPES:
        return Always(event.keep_in)
    return _ANSWERS.get(answer, "deny")


def ask_through_events(emit: Callable[[PermissionRequested], None]) -> Ask:
    """An Ask that hands each question to `emit` (e.g. the session's event queue) and waits
    for whoever handles the event to set its future."""

    async def ask(domain: str) -> Answer:
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        event = PermissionRequested(
            tool=NETWORK_TOOL,
            input={"domain": domain},
            reason=f"a sandboxed command connects to {domain}",
            future=future,
            suggestions=[domain],  # what "for the session" / "always" would keep
        )
        emit(event)
        return answer_of(event, await future)

    return ask
