"""SubAgent types a program defines (ported from the Claude Agent SDK's `agents.py`:
`AgentDefinition` keeps its name and fields). The model hands work to them with its Agent tool
(`subagent_type`); each runs with its own prompt, tools and model, in a context of its own.
"""

import asyncio

from peri_cli.sdk import (
    AgentDefinition,
    PeriOptions,
    ResultEvent,
    ToolResultEvent,
    ToolUseEvent,
    query,
)

AGENTS = {
    "code-reviewer": AgentDefinition(
        description="Reviews code for bugs and style",
        prompt="You are a code reviewer. Name each bug with its file and line.",
        tools=["Read", "Grep", "Glob"],
        model="sonnet",
    ),
    "doc-writer": AgentDefinition(
        description="Writes documentation",
        prompt="You write short, accurate documentation.",
        tools=["Read", "Write"],
        model="haiku",
    ),
}


async def main() -> None:
    options = PeriOptions(agents=AGENTS, allowed_tools=["Read", "Grep", "Glob"])
    prompt = "Use the code-reviewer agent to review calc.py"
    async for message in query(prompt, options):
        if isinstance(message, ToolUseEvent) and message.name == "Agent":
            print(f"Handed to: {message.input['subagent_type']}")
        elif isinstance(message, ToolResultEvent) and message.name == "Agent":
            print(f"Report: {message.content.splitlines()[-1]}")
        elif isinstance(message, ResultEvent):
            print(f"Peri: {message.result}")


if __name__ == "__main__":
    asyncio.run(main())
