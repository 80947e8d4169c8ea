"""A calculator as in-process MCP tools (ported from the Claude Agent SDK's `mcp_calculator.py`:
`@tool` and `create_sdk_mcp_server` keep their names). The tools run in this program, on its
event loop; the model finds them (they are deferred, as every MCP tool) and calls them as
`mcp__calc__<name>`.
"""

import asyncio
from typing import Any

from peri_cli.sdk import (
    AssistantEvent,
    PeriOptions,
    ResultEvent,
    ToolResultEvent,
    ToolUseEvent,
    create_sdk_mcp_server,
    query,
    tool,
)


def answer(text: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "is_error": error}


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return answer(f"{args['a']:g} + {args['b']:g} = {args['a'] + args['b']:g}")


@tool("divide", "Divide one number by another", {"a": float, "b": float})
async def divide(args: dict[str, Any]) -> dict[str, Any]:
    if args["b"] == 0:
        return answer("Error: division by zero", error=True)
    return answer(f"{args['a']:g} / {args['b']:g} = {args['a'] / args['b']:g}")


@tool(
    "sqrt",
    "Square root of a number",
    {"type": "object", "properties": {"n": {"type": "number", "minimum": 0}}, "required": ["n"]},
)
async def sqrt(args: dict[str, Any]) -> dict[str, Any]:
    return answer(f"sqrt({args['n']:g}) = {args['n'] ** 0.5:g}")


calculator = create_sdk_mcp_server("calculator", version="2.0.0", tools=[add, divide, sqrt])


async def main() -> None:
    options = PeriOptions(
        mcp_servers={"calc": calculator},
        allowed_tools=["mcp__calc__add", "mcp__calc__divide", "mcp__calc__sqrt"],
    )
    for prompt in ("What is 23 + 19?", "What is 10 divided by 0?", "What is the root of 144?"):
        print(f"User: {prompt}")
        async for message in query(prompt, options):
            # (MCP tools are deferred: the model runs them through ExecuteExtraTool)
            if isinstance(message, ToolUseEvent) and message.name == "ExecuteExtraTool":
                print(f"Tool: {message.input['tool_name']}")
            elif isinstance(message, ToolResultEvent) and message.name == "ExecuteExtraTool":
                print(f"Answer: {message.content}")
            elif isinstance(message, AssistantEvent) and message.text:
                print(f"Peri: {message.text}")
            elif isinstance(message, ResultEvent):
                print(f"Result: {message.subtype}")


if __name__ == "__main__":
    asyncio.run(main())
