"""The sandbox proxy's question about a new domain, answered by the program's `can_use_tool`
as `can_use_tool("Network", {"domain": ...})`; without one (headless) every new domain is denied.

`Allow(remember="project")` is "always": the gate then keeps the domain in
`sandbox.network.allowedDomains` of the layer `Allow.keep_in` names (the local settings unless it
says "project" or "user"); any other Allow lets it through for the session."""

from __future__ import annotations

from peri_cli.sandbox.asking import NETWORK_TOOL
from peri_cli.sandbox.gate import Always, Answer, Ask
from peri_cli.sdk.options import Allow, CanUseTool, PermissionContext


def network_ask(can_use_tool: CanUseTool | None, session_id: str) -> Ask | None:
    """The gate's Ask for a program's callback; None (deny unless allowed) without one."""
    if can_use_tool is None:
        return None
    callback = can_use_tool

    async def ask(domain: str) -> Answer:
        context = PermissionContext(
            session_id=session_id,
            tool_use_id="",  # no tool call: a command's connection asks
            suggested_rule=None,
            reason=f"a sandboxed command connects to {domain}",
        )
        try:
            verdict = await callback(NETWORK_TOOL, {"domain": domain}, context)
        except Exception:  # a broken callback denies
            return "deny"
        if not isinstance(verdict, Allow):
            return "deny"
        if verdict.remember != "project":
            return "allow"
        return Always(verdict.keep_in or "local")

    return ask
