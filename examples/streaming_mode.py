"""A conversation with `PeriClient` (ported from the Claude Agent SDK's `streaming_mode.py`:
`ClaudeSDKClient` -> `PeriClient`; `query()`, `receive_response()`, `interrupt()` keep their names).

`python streaming_mode.py` runs every example; `python streaming_mode.py multi_turn` one.
"""

import asyncio
import sys

from peri_cli.sdk import (
    AssistantEvent,
    PeriClient,
    PeriOptions,
    ResultEvent,
    TextBlock,
    ToolUseBlock,
)


def show(message: object) -> None:
    if isinstance(message, AssistantEvent):
        for block in message.content:
            if isinstance(block, TextBlock):
                print(f"Peri: {block.text}")
            elif isinstance(block, ToolUseBlock):
                print(f"Tool: {block.name}")
    elif isinstance(message, ResultEvent):
        print(f"Result: {message.subtype}" + (f" ({message.error})" if message.error else ""))


async def basic() -> None:
    async with PeriClient() as client:
        await client.query("What is 2+2?")
        async for message in client.receive_response():
            show(message)


async def multi_turn() -> None:
    async with PeriClient() as client:
        for prompt in ("What is the capital of France?", "What is its population?"):
            print(f"User: {prompt}")
            await client.query(prompt)
            async for message in client.receive_response():
                show(message)


async def interrupt() -> None:
    """Stop a long prompt; it still ends with one result (`cancelled`), and the client goes on."""
    options = PeriOptions(permission_mode="bypassPermissions")
    async with PeriClient(options) as client:
        await client.query("Count slowly to one hundred with `sleep` between numbers.")
        async for message in client.receive_response():
            show(message)
            if isinstance(message, AssistantEvent) and any(
                isinstance(b, ToolUseBlock) for b in message.content
            ):
                await client.interrupt()
        await client.query("Just say hello.")
        async for message in client.receive_response():
            show(message)


async def with_options() -> None:
    options = PeriOptions(allowed_tools=["Read"], max_turns=3)
    async with PeriClient(options) as client:
        await client.query("Read README.md and tell me its first line.")
        async for message in client.receive_response():
            show(message)
        print(f"Session: {client.session_id}")


EXAMPLES = {
    "basic": basic,
    "multi_turn": multi_turn,
    "interrupt": interrupt,
    "with_options": with_options,
}


async def main(names: list[str]) -> None:
    for name in names or list(EXAMPLES):
        if name not in EXAMPLES:
            sys.exit(f"no example {name!r}; one of: {', '.join(EXAMPLES)}")
        print(f"=== {name} ===")
        await EXAMPLES[name]()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
