"""Words for a person about a finished run (the headless face prints them on stderr)."""

from __future__ import annotations

from peri_cli.agent.loop import Agent


def denial_summary(agent: Agent) -> str:
    """One line: how many calls were denied, in which mode, and the flag that would allow them."""
    denials = agent.denials
    names = ", ".join(dict.fromkeys(d.tool_name for d in denials))
    edits_only = all(
        agent.tools.get(d.tool_name) is not None
        and getattr(agent.tools.get(d.tool_name), "kind", "") == "write"
        and "outside the workspace" not in d.reason
        for d in denials
    )
    flag = (
        "--permission-mode accept-edits"
        if edits_only and agent.policy.mode in ("default", "plan")
        else "--permission-mode bypass"
    )
    n = len(denials)
    return (
        f"{n} tool call{'s were' if n > 1 else ' was'} denied ({names}) in permission mode "
        f"{agent.policy.mode!r}; headless runs cannot ask. To allow {'them' if n > 1 else 'it'}, "
        f"run again with {flag}."
    )
