"""A call that cannot succeed is not put to the user: an Edit whose `old_string` is not in the
file fails at once with the error the model needs, instead of asking and failing after the
approval. The check reads the files the call would change, so it runs only where a Read of
them would be allowed without asking: an error built from a file's text (Edit's "did you
mean" lines) never shows the model a file it could not read."""

from __future__ import annotations

from typing import Any

from peri_cli.base.tool import Prechecked, Tool, ToolContext
from peri_cli.permissions.call_facts import Call
from peri_cli.permissions.policy import PermissionPolicy


async def fails_early(
    tool: Tool, params: Any, call: Call, policy: PermissionPolicy, ctx: ToolContext
) -> str | None:
    """Why the call would fail, known before it is asked about; None to ask as usual."""
    if not isinstance(tool, Prechecked) or not call.writes:
        return None
    look = Call(tool="Read", kind="read", reads=call.writes, tool_input=call.tool_input)
    if policy.decide(look, agent=ctx.agent_id).action != "allow":
        return None
    try:
        return await tool.precheck(params, ctx)
    except Exception:  # a check that cannot be made: ask, and let the call say what is wrong
        return None
