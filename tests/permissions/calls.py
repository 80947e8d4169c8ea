"""Calls as the rules see them, made by the real tools from a name and an input: what each tool
says it reads, writes and names (`describe_call`), not a table kept beside the tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from peri_cli.base.tool import Tool, ToolContext, Writes
from peri_cli.extensions.agent_types import AgentCatalog
from peri_cli.extensions.skills.catalog import SkillCatalog
from peri_cli.permissions.call_facts import Call, describe_call
from peri_cli.permissions.policy import Decision, PermissionPolicy
from peri_cli.tools import builtin_tools
from peri_cli.tools.agent import AgentTool
from peri_cli.tools.skill import SkillTool
from peri_cli.tools.webfetch import WebFetchTool


def _tools() -> dict[str, Tool]:
    tools: list[Tool] = [*builtin_tools(), AgentTool(AgentCatalog()), SkillTool(SkillCatalog())]
    tools.append(WebFetchTool())
    return {t.name: t for t in tools}


TOOLS = _tools()


def call_of(
    tool: str, tool_input: dict[str, Any], workspace: Path, writes: Sequence[Path] | None = None
) -> Call:
    """The call of the built-in tool `tool` (an unknown name: an external tool that touches no
    files Peri knows of); `writes` replaces where the tool says its files land. Required fields
    the test leaves out are "x"."""
    found = TOOLS.get(tool)
    if found is None:
        return Call(tool=tool, kind="external", tool_input=dict(tool_input))
    ctx = ToolContext(workspace=workspace, session_dir=workspace / ".peri-test-session")
    schema = found.spec().input_schema
    filler = {k: "x" for k in schema.get("required", ()) if k not in tool_input}
    params = found.validate({**filler, **tool_input})  # the rest of the input does not matter
    try:
        said = found.writes(params, ctx)
    except ValueError:  # a NUL byte: the loop refuses the call first; the rules must not raise
        given = [ctx.resolve(v) for k, v in tool_input.items() if k == "file_path"]
        said = Writes(given=tuple(given))
    if writes is not None:
        said = Writes(tuple(writes), said.anything, said.given)
    return describe_call(found, params, tool_input, ctx, said)


def decide_for(
    policy: PermissionPolicy,
    tool: str,
    tool_input: dict[str, Any],
    writes: Sequence[Path] | None = None,
    **how: Any,
) -> Decision:
    return policy.decide(call_of(tool, tool_input, policy.workspace, writes), **how)


def suggestions_for(policy: PermissionPolicy, tool: str, tool_input: dict[str, Any]) -> list[str]:
    return policy.suggestions(call_of(tool, tool_input, policy.workspace))
