"""The proxy's question about a new domain as a PermissionRequested event, for the face that
answers events (the TUI's approval dialog): "Always allow in this project" becomes "always"."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from peri_cli.base.events import PermissionAnswer, PermissionRequested
from peri_cli.sandbox.gate import Answer, Ask

NETWORK_TOOL = "Network"  # the name questions about domains carry (as can_use_tool sees it)
_ANSWERS: dict[PermissionAnswer, Answer] = {
    "allow": "allow",
    "allow_session": "allow",  # the gate keeps every answer for the session
    "allow_project": "always",
    "deny": "deny",
}


def ask_through_events(emit: Callable[[PermissionRequested], None]) -> Ask:
    """An Ask that hands each question to `emit` (e.g. the session's event queue) and waits
    for whoever handles the event to set its future."""

    async def ask(domain: str) -> Answer:
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        emit(
            PermissionRequested(
                tool=NETWORK_TOOL,
                input={"domain": domain},
                reason=f"a sandboxed command connects to {domain}",
                future=future,
                suggestions=[domain],  # what "for the session" / "always" would keep
            )
        )
        return _ANSWERS.get(await future, "deny")

    return ask
