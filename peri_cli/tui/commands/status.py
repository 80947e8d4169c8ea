"""/status: this session's model, provider and permission mode, the workspace's trust, and the
settings files read (Peri's and Claude Code's) with the file each value came from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Static

from peri_cli.tui.commands.registry import command
from peri_cli.tui.ext_views import lines_view

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort


@command("status", immediate=True)
async def status(app: AppPort, _arg: str) -> None:
    from peri_cli.base.settings_origin import file_line, origin_rows

    runtime, agent = app.runtime, app.agent
    trusted = runtime.trust is not None and runtime.trust.trusted
    lines = [
        f"Model: {agent.model} ({runtime.provider_name})",
        f"Permission mode: {agent.policy.mode}",
        f"Workspace: {runtime.workspace} ({'trusted' if trusted else 'not trusted'})",
    ]
    loaded = runtime.loaded
    layers = loaded.layers if loaded is not None else ()
    lines.append("Settings files read (lowest precedence first):")
    lines += [f"  {file_line(layer)}" for layer in layers] or ["  none"]
    rows = origin_rows(loaded, trusted=trusted) if loaded is not None else []
    lines.append("Values set (anything else is the built-in default):")
    lines += [f"  {row.describe()}" for row in rows] or ["  none"]
    await app.conversation.add(Static(lines_view("Status", lines), classes="help"))
