"""The slash commands a headless run carries out (`peri -p "/compact"`, a program's
`send("/clear")`): the core's commands marked `headless` (`extensions.commands.COMMANDS`), one
handler each, registered with `@headless(name)` as the TUI registers its own with `@command`. A
command marked headless without a handler, or a handler for one that is not, fails at import:
no command can fall through to another's handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from peri_cli.agent.loop import Agent
from peri_cli.base.events import Compacted, CompactFailed
from peri_cli.base.events import Event as CoreEvent
from peri_cli.extensions.commands import COMMANDS
from peri_cli.sdk.events import Event, SystemEvent
from peri_cli.sdk.translate import Translator

if TYPE_CHECKING:
    from peri_cli.sdk.composed import Runtime


class PromptRun(Protocol):
    """What a handler may use of the prompt's run (`turn.PromptRun`)."""

    agent: Agent
    runtime: Runtime
    out: Translator  # the run's outcome: set `result` or `error`

    def emit(self, event: Event) -> None: ...

    def core(self, event: CoreEvent) -> None:
        """Emit a core event as the run's events (a compaction's, say)."""
        ...


Handler = Callable[[PromptRun, str], Awaitable[None]]
HANDLERS: dict[str, Handler] = {}


def headless(name: str) -> Callable[[Handler], Handler]:
    """Register the decorated `async def handler(run, argument)` as headless `/name`."""

    def register(handler: Handler) -> Handler:
        command = COMMANDS.get(name)
        if command is None or not command.headless:
            raise ValueError(f"/{name} is not a headless command in extensions.commands.COMMANDS")
        if name in HANDLERS:
            raise ValueError(f"/{name} is registered twice")
        HANDLERS[name] = handler
        return handler

    return register


def missing() -> list[str]:
    """The core's headless commands no handler took."""
    return [c.name for c in COMMANDS.values() if c.headless and c.name not in HANDLERS]


@headless("clear")
async def clear(run: PromptRun, _argument: str) -> None:
    run.agent.session.clear()
    run.out.result = "Cleared the visible history; the session keeps its frozen prompt."
    if (note := run.runtime.style_note()) is not None:
        run.out.result += " " + note
    run.emit(SystemEvent.of("clear", session_id=run.agent.session.id))


@headless("compact")
async def compact(run: PromptRun, argument: str) -> None:
    agent, out = run.agent, run.out
    if agent.compactor is None:
        out.error = "compaction is not available in this build"
        return
    async for event in agent.compact_now(argument or None):
        run.core(event)
        if isinstance(event, Compacted):
            out.result = (
                f"Compacted: {event.tokens_before} -> {event.tokens_after} tokens "
                f"({event.affected} messages summarized)."
            )
        elif isinstance(event, CompactFailed):
            out.error = f"compaction failed: {event.reason}"


if missing():
    raise RuntimeError(f"headless slash commands without a handler: {missing()}")
