"""/sandbox: the Bash sandbox's state, dependencies, paths and domains, and its two switches
(auto-allow, the unsandboxed fallback), saved to the local settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peri_cli.base.textsafe import visible
from peri_cli.tui.commands.registry import command

if TYPE_CHECKING:
    from peri_cli.tui.ports import AppPort

_VALUES = {"on": True, "off": False, "true": True, "false": False}


@command("sandbox", immediate=True)
async def sandbox(app: AppPort, arg: str) -> None:
    words = arg.split()
    if not words:
        for line in app.runtime.sandbox_status():
            await app.notice(line)
        return
    if len(words) != 2 or words[1].lower() not in _VALUES:
        await app.notice(f"Usage: /sandbox [auto|fallback on|off], not {visible(arg)!r}", "warning")
        return
    await app.notice(app.runtime.sandbox_switch(words[0].lower(), _VALUES[words[1].lower()]))
