"""`PeriOptions.agents`: a program's SubAgent types, in the Claude Agent SDK's shape
(`AgentDefinition(description, prompt, tools, model)`), beside those from `.claude/agents` files;
on a name clash the program's definition wins, as in that SDK."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from peri_cli.extensions.agent_types import AgentType, is_agent_name
from peri_cli.sdk.errors import OptionError

SOURCE = "PeriOptions.agents"  # the label `/agents` and problems show for a program's type


@dataclass(frozen=True)
class AgentDefinition:
    """One SubAgent type the Agent tool offers as `subagent_type` = its key in `agents`.

    `prompt` is its instructions (sent as its system text, after the session's frozen prompt,
    as for an agent file's body); `tools`: the names of the parent's tools it may use (None:
    all of them); `model`: `sonnet`, `opus`, `haiku`, `inherit` (None: the same) or a model id,
    mapped as an agent file's `model:` is."""

    description: str
    prompt: str
    tools: Sequence[str] | None = None
    model: str | None = None


def check_agents(agents: object) -> None:
    """OptionError naming `agents` for anything but a dict of names to `AgentDefinition`s."""
    if agents is None:
        return
    if not isinstance(agents, Mapping):
        raise OptionError("agents", f"must be a dict of name -> AgentDefinition, not {agents!r}")
    for name, definition in agents.items():
        if not is_agent_name(name):
            raise OptionError(
                "agents", f"{name!r} is not a type name (letters, digits, '-', '_', '.')"
            )
        if not isinstance(definition, AgentDefinition):
            kind = type(definition).__name__
            raise OptionError("agents", f"{name!r} must be an AgentDefinition, not a {kind}")
        for field in ("description", "prompt"):
            value = getattr(definition, field)
            if not isinstance(value, str) or (field == "description" and not value.strip()):
                raise OptionError("agents", f"{name!r}: {field} must be a non-empty string")
        tools = definition.tools
        if tools is not None and (
            isinstance(tools, str)
            or not isinstance(tools, Sequence)
            or not all(isinstance(t, str) for t in tools)
        ):
            raise OptionError("agents", f"{name!r}: tools must be a list of tool names or None")
        if definition.model is not None and not isinstance(definition.model, str):
            raise OptionError("agents", f"{name!r}: model must be a string or None")


def agent_types(agents: Mapping[str, AgentDefinition] | None) -> tuple[AgentType, ...]:
    """The definitions as the agent types the runtime offers (checked by `check_agents`)."""
    return tuple(
        AgentType(
            name=name,
            description=" ".join(d.description.split()),
            tools=None if d.tools is None else tuple(d.tools),
            model=None if d.model in (None, "", "inherit") else d.model,
            instructions=d.prompt.strip(),
            source=SOURCE,
        )
        for name, d in (agents or {}).items()
    )
