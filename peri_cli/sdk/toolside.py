"""The runtime's tool side: the tools a session's agent gets (the built-ins, Agent, Skill,
WebFetch, the MCP servers' and the extra-tool wrappers, less what its Meta Harness removed), and
what the faces read of them (each tool's traits) without reaching the tools room."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from peri_cli.base.modes import MODES, Mode
from peri_cli.base.tool import PLAIN, Tool, ToolRegistry, ToolTraits
from peri_cli.context.meta import MetaRegistry
from peri_cli.context.todos import TODO_TOOL
from peri_cli.extensions.extra_tools import offer_extra_tools

if TYPE_CHECKING:
    from peri_cli.agent.loop import Agent
    from peri_cli.base.settings import Settings
    from peri_cli.context.meta import MetaState
    from peri_cli.extensions.skills.catalog import SkillCatalog
    from peri_cli.mcp.manager import McpManager
    from peri_cli.tools.agent import AgentTool


class ToolSide:
    """Mixed into `Runtime`: the tools of one run."""

    if TYPE_CHECKING:
        agent: Agent | None
        builtin_names: frozenset[str] | None  # only these built-in tools (None: all)
        settings: Settings
        meta: MetaState
        skills: SkillCatalog
        mcp: McpManager | None
        mode: Mode

    def tool_maker(self, agent_tool: AgentTool) -> Callable[[], ToolRegistry]:
        """What builds a new agent's registry (the main one's, a fork's)."""
        from peri_cli.tools import builtin_tools
        from peri_cli.tools.exit_plan_mode import ExitPlanModeTool
        from peri_cli.tools.skill import SkillTool
        from peri_cli.tools.webfetch import WebFetchTool

        meta, names = self.meta, self.builtin_names
        todo_off = not self.settings.todoTool

        def add(registry: ToolRegistry, tools: list[Tool]) -> None:
            for tool in tools:
                if todo_off and tool.name == TODO_TOOL:
                    continue
                if names is None or tool.name in names:
                    registry.add(tool)

        def make_tools() -> ToolRegistry:
            registry = MetaRegistry(meta=meta)  # drops what the Meta Harness removed
            add(registry, builtin_tools())
            if agent_tool.catalog.types:
                add(registry, [agent_tool])
            if self.skills.for_model():
                add(registry, [SkillTool(self.skills)])
            if self.mcp is not None and meta.enabled("mcp"):
                self.mcp.attach(registry)  # the servers' sources first, so the wrappers are offered
            add(registry, [WebFetchTool(), ExitPlanModeTool(self.mode_now, self.switch_mode)])
            if meta.enabled("deferred"):
                offer_extra_tools(registry)
            return registry

        return make_tools

    def mode_now(self) -> str:
        """The permission mode in force (the agent's, once it is built)."""
        return str(self.agent.policy.mode if self.agent is not None else self.mode)

    def switch_mode(self, mode: str) -> None:
        """Change the permission mode from inside a turn (an approved plan)."""
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}")
        self.mode = mode
        if self.agent is not None:
            self.agent.policy.mode = self.mode

    def tool_traits(self, name: str) -> ToolTraits:
        """What the session's tool of that name says of itself (plain traits when it has none:
        a tool of an older session, a server that is gone)."""
        return PLAIN if self.agent is None else self.agent.tools.traits(name)

    def capability_tools(self) -> dict[str, list[str]]:
        """Each Meta Harness capability's built-in tools, as their traits say."""
        from peri_cli.tools import capability_tools

        return capability_tools()
