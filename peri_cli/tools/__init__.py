"""The built-in tools, one per module, each with its model-facing description in a sibling .md.

A new tool is its module, its `.md` and one line in `builtin_tools()`: what the rest of Peri
needs to know about it (its capability, card argument, editor kind, whether it is read-only or
deferred, the files it reads and writes) it says itself (`base/tool.py`'s `Tool`)."""

from __future__ import annotations

from peri_cli.base.tool import Tool, ToolTraits
from peri_cli.tools.ask_user_question import AskUserQuestionTool
from peri_cli.tools.bash import BashTool
from peri_cli.tools.edit import EditTool
from peri_cli.tools.glob import GlobTool
from peri_cli.tools.grep import GrepTool
from peri_cli.tools.read import ReadTool
from peri_cli.tools.todowrite import TodoWriteTool
from peri_cli.tools.write import WriteTool


def builtin_tools() -> list[Tool]:
    """One instance of each built-in tool that needs nothing from the session (the Agent,
    Skill and WebFetch tools and the extra-tool wrappers are added by the runtime)."""
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        BashTool(),
        GlobTool(),
        GrepTool(),
        AskUserQuestionTool(),
        TodoWriteTool(),
    ]


def builtin_traits() -> dict[str, ToolTraits]:
    """Every built-in tool's name and traits, the session-bound ones included (docs, `peri
    meta`): the tools of `builtin_tools()`, Agent, Skill, WebFetch, ExitPlanMode,
    StructuredOutput (a run's, when it asks for structured output) and the extra-tool wrappers."""
    from peri_cli.extensions.extra_tools import ExecuteExtraTool, SearchExtraTools
    from peri_cli.tools.agent import AgentTool
    from peri_cli.tools.exit_plan_mode import ExitPlanModeTool
    from peri_cli.tools.skill import SkillTool
    from peri_cli.tools.structured_output import StructuredOutputTool
    from peri_cli.tools.webfetch import WebFetchTool

    named = {t.name: t.traits for t in builtin_tools()}
    session_bound = (AgentTool, SkillTool, WebFetchTool, ExitPlanModeTool, StructuredOutputTool)
    for c in (*session_bound, SearchExtraTools, ExecuteExtraTool):
        named[c.name] = c.traits
    return named


def capability_tools() -> dict[str, list[str]]:
    """Each Meta Harness capability's built-in tools, as the tools' traits say (`peri meta`)."""
    out: dict[str, list[str]] = {}
    for name, traits in builtin_traits().items():
        if traits.capability is not None:
            out.setdefault(traits.capability, []).append(name)
    return out
