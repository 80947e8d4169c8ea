"""The headless commands' registry: each core command marked headless has exactly one handler,
and nothing else can take one (no command falls through to another's handler)."""

from __future__ import annotations

import pytest

from peri_cli.extensions.commands import COMMANDS
from peri_cli.sdk.commands import HANDLERS, headless, missing


async def _handler(run: object, argument: str) -> None:
    return None


def test_every_headless_command_has_its_own_handler() -> None:
    assert missing() == []
    assert set(HANDLERS) == {c.name for c in COMMANDS.values() if c.headless}
    assert len({id(h) for h in HANDLERS.values()}) == len(HANDLERS)


def test_a_tui_only_or_unknown_command_or_a_second_handler_fails() -> None:
    with pytest.raises(ValueError, match="not a headless command"):
        headless("model")(_handler)  # the TUI's only
    with pytest.raises(ValueError, match="not a headless command"):
        headless("frobnicate")(_handler)
    with pytest.raises(ValueError, match="registered twice"):
        headless("compact")(_handler)
    assert "model" not in HANDLERS and "frobnicate" not in HANDLERS
