"""Which built-in tools the model is offered (ported from the Claude Agent SDK's
`tools_option.py`): `tools=[...]` names them, `[]` offers none. This is what the model sees; what
runs unasked is `allowed_tools`, the permission rules.
"""

import asyncio

from peri_cli.sdk import PeriOptions, SystemEvent, query


async def offered(tools: list[str] | None) -> list[str]:
    names: list[str] = []
    async for message in query("Which tools do you have?", PeriOptions(tools=tools)):
        if isinstance(message, SystemEvent) and message.subtype == "init":
            names = list(message.data["tools"])  # (the prompt goes on to its answer)
    return names


async def main() -> None:
    for tools in (["Read", "Glob", "Grep"], []):
        print(f"tools={tools}: {await offered(tools)}")
    print(f"every tool: {len(await offered(None))} of them")


if __name__ == "__main__":
    asyncio.run(main())
