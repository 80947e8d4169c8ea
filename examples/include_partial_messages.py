"""Text as it streams (ported from the Claude Agent SDK's `include_partial_messages.py`: its
`StreamEvent`s are Peri's `TextDeltaEvent` and `ThinkingDeltaEvent`).
"""

import asyncio

from peri_cli.sdk import PeriOptions, ResultEvent, TextDeltaEvent, ThinkingDeltaEvent, query


async def main() -> None:
    options = PeriOptions(include_partial_messages=True)
    pieces = 0
    async for message in query("Write a haiku about the sea.", options):
        if isinstance(message, ThinkingDeltaEvent):
            print(f"[thinking] {message.text}")
        elif isinstance(message, TextDeltaEvent):
            pieces += 1
            print(message.text, end="", flush=True)
        elif isinstance(message, ResultEvent):
            print(f"\n{pieces} pieces, {message.usage['output_tokens']} tokens")


if __name__ == "__main__":
    asyncio.run(main())
