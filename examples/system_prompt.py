"""Choosing the system prompt (ported from the Claude Agent SDK's `system_prompt.py`): none
(Peri's own), a string (replaces it), or the preset with text appended (`claude_code` names
Peri's prompt, so ported programs run as they are). It is frozen into the session: a resumed
session keeps the prompt it began with.
"""

import asyncio

from peri_cli.sdk import PeriOptions, ResultEvent, query

CHOICES = {
    "default": PeriOptions(),
    "string": PeriOptions(system_prompt="You are a pirate assistant. Answer like a pirate."),
    "preset": PeriOptions(
        system_prompt={"type": "preset", "preset": "claude_code", "append": "End with a haiku."}
    ),
}


async def main() -> None:
    for name, options in CHOICES.items():
        async for message in query("What is 2 + 2?", options):
            if isinstance(message, ResultEvent):
                print(f"{name}: {message.result}")


if __name__ == "__main__":
    asyncio.run(main())
