"""The slash commands, one module per group: the session (`session`, `rewind`), the model and
mode (`model`), the context (`context`), extensions (`extensions`), plugins (`plugins`), the
Bash sandbox (`sandbox`), the settings in force (`status`), SubAgents (`agents`), output styles
(`styles`) and the app's own (`basics`). Each handler registers itself in `registry` with
`@command`; importing this package registers them all. Handlers reach the app through
`tui.ports.AppPort` only."""

from __future__ import annotations

from peri_cli.tui.commands import (
    agents,
    basics,
    context,
    extensions,
    model,
    plugins,
    rewind,
    sandbox,
    session,
    status,
    styles,
)
from peri_cli.tui.commands.registry import immediate, missing, run

GROUPS = (
    session,
    rewind,
    model,
    context,
    extensions,
    plugins,
    sandbox,
    status,
    agents,
    styles,
    basics,
)
if missing():
    raise RuntimeError(f"slash commands without a handler: {missing()}")

__all__ = ["GROUPS", "immediate", "run"]
