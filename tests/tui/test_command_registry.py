"""The slash commands' registry: every core command has one handler, registered by decorator."""

from __future__ import annotations

import pytest

from peri_cli.extensions.commands import COMMANDS, parse_command
from peri_cli.tui import commands
from peri_cli.tui.commands.registry import REGISTRY, command, missing


def test_every_command_has_a_handler_in_a_group_module() -> None:
    assert missing() == []
    assert set(REGISTRY) == set(COMMANDS)
    homes = {c.handler.__module__ for c in REGISTRY.values()}
    assert homes == {g.__name__ for g in commands.GROUPS}


def test_a_command_the_core_does_not_know_or_a_second_handler_fails() -> None:
    async def handler(app: object, arg: str) -> None:
        return None

    with pytest.raises(ValueError, match="not a command"):
        command("frobnicate")(handler)
    with pytest.raises(ValueError, match="registered twice"):
        command("help")(handler)


def test_what_acts_at_once_while_a_turn_runs() -> None:
    at_once = {name for name, c in REGISTRY.items() if c.immediate}
    assert at_once == {
        "help", "exit", "mode", "model", "context", "agents", "permissions", "hooks", "skills",
        "mcp", "sandbox", "todos", "output-style", "status", "plugin",
    }  # fmt: skip
    invocation = parse_command("/model x")
    assert invocation is not None and commands.immediate(invocation)
    invocation = parse_command("/compact")
    assert invocation is not None and not commands.immediate(invocation)
