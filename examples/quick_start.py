"""Quick start: one prompt with `query`, with options, and with tools (ported from the Claude
Agent SDK's quick start: `ClaudeAgentOptions` -> `PeriOptions`, `ResultMessage` -> `ResultEvent`).

Run it in a repository with `ANTHROPIC_API_KEY` (or Peri's provider settings) in the environment.
"""

import asyncio

from peri_cli.sdk import AssistantEvent, PeriOptions, ResultEvent, TextBlock, query


def show(message: object) -> None:
    if isinstance(message, AssistantEvent):
        for block in message.content:
            if isinstance(block, TextBlock):
                print(f"Peri: {block.text}")
    elif isinstance(message, ResultEvent) and message.total_cost_usd:
        print(f"Cost: ${message.total_cost_usd:.4f}")


async def basic() -> None:
    print("=== Basic ===")
    async for message in query("What is 2 + 2?"):
        show(message)


async def with_options() -> None:
    print("=== With options ===")
    options = PeriOptions(max_turns=1, append_system_prompt="Explain things simply.")
    async for message in query("Explain what Python is in one sentence.", options):
        show(message)


async def with_tools() -> None:
    print("=== With tools ===")
    # (`allowed_tools` are permission rules, as in the Claude Agent SDK: Write runs unasked)
    options = PeriOptions(allowed_tools=["Read", "Write"])
    async for message in query("Create hello.txt with 'Hello, World!' in it", options):
        show(message)


async def main() -> None:
    await basic()
    await with_options()
    await with_tools()


if __name__ == "__main__":
    asyncio.run(main())
