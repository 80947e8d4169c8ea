"""`!command`: the user runs a shell command themselves, through the session's own Bash tool (same
scrubbed environment, process group and output limits), with no approval since the user asks.
Its output is shown as it comes and recorded for the model to see on its next turn."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from peri_cli.agent.attachments import shell_entry
from peri_cli.base.events import (
    USER_SHELL_ID,
    Event,
    Notice,
    ToolCall,
    ToolFinished,
    TurnEnded,
)
from peri_cli.base.messages import TextPart, ToolUsePart
from peri_cli.base.textsafe import scrub_surrogates
from peri_cli.base.tool import ToolError, ToolOutput

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent


async def user_shell(agent: Agent, command: str) -> AsyncIterator[Event]:
    """Run `command` in the workspace and record it with its output (an entry with an origin,
    never a typed user turn). Cancelling stops the command and records nothing."""
    from peri_cli.agent.liveoutput import LiveOutput

    bash = agent.tools.get("Bash")
    if bash is None:
        yield Notice("! needs the Bash tool, which this session does not have.", "error")
        yield TurnEnded("done")
        return
    use = ToolUsePart(id=f"{USER_SHELL_ID}{uuid.uuid4().hex[:12]}", name="Bash", input={})
    yield ToolCall(use.id, "Bash", {"command": command})
    live = LiveOutput()
    ctx = dataclasses.replace(agent.tool_ctx, call_id=use.id, progress=live.reporter(use))
    task = asyncio.ensure_future(_call(bash, command, ctx))
    try:
        while not task.done():
            waker: asyncio.Future[Any] = asyncio.ensure_future(live.changed.wait())
            try:
                await asyncio.wait({task, waker}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waker.cancel()
            for report in live.take():
                yield report
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    output = task.result()
    text = scrub_surrogates("".join(p.text for p in output.content if isinstance(p, TextPart)))
    agent.session.append(shell_entry(command, text, output.is_error))
    yield ToolFinished(use.id, "Bash", text, output.is_error)
    yield TurnEnded("done")


async def _call(bash: Any, command: str, ctx: Any) -> ToolOutput:
    try:
        output: ToolOutput = await bash.call(bash.validate({"command": command}), ctx)
    except ToolError as e:
        return ToolOutput.error(str(e))
    return output
