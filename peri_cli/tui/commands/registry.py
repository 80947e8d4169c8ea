"""The slash commands' one registry: a handler registers itself with `@command(name)`, one
module per group. The name, usage and one-line description that /help and completion show are
the core's (`extensions.commands.COMMANDS`, which `peri -p` parses with too), written once. A
name the core does not know, or one registered twice, fails at import; `missing()` lists the
core's commands no handler took."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from peri_cli.extensions.commands import COMMANDS, Command, Invocation

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort

Handler = Callable[["AppPort", str], Awaitable[None]]


@dataclass(frozen=True)
class SlashCommand:
    command: Command
    handler: Handler
    immediate: bool  # acts at once even while a turn runs (the others wait in the queue)


REGISTRY: dict[str, SlashCommand] = {}


def command(name: str, *, immediate: bool = False) -> Callable[[Handler], Handler]:
    """Register the decorated `async def handler(app, argument)` as `/name`."""

    def register(handler: Handler) -> Handler:
        if name not in COMMANDS:
            raise ValueError(f"/{name} is not a command in extensions.commands.COMMANDS")
        if name in REGISTRY:
            raise ValueError(f"/{name} is registered twice")
        REGISTRY[name] = SlashCommand(COMMANDS[name], handler, immediate)
        return handler

    return register


def missing() -> list[str]:
    return [name for name in COMMANDS if name not in REGISTRY]


def immediate(invocation: Invocation) -> bool:
    found = REGISTRY.get(invocation.command.name)
    return found is not None and found.immediate


async def run(app: AppPort, invocation: Invocation) -> None:
    await REGISTRY[invocation.command.name].handler(app, invocation.argument)
