"""Hooks as Python callbacks (ported from the Claude Agent SDK's `hooks.py`: the same
`HookMatcher`, the same inputs and answers).

`python hooks.py` runs every example; `python hooks.py PreToolUse` one.
"""

import asyncio
import sys
from typing import Any

from peri_cli.sdk import AssistantEvent, HookMatcher, PeriClient, PeriOptions, ResultEvent

Input = dict[str, Any]  # what a hook reads, and what it answers


def show(message: object) -> None:
    if isinstance(message, AssistantEvent) and message.text:
        print(f"Peri: {message.text}")
    elif isinstance(message, ResultEvent):
        print(f"Result: {message.subtype}" + (f" ({message.error})" if message.error else ""))


async def block_scripts(input_data: Input, tool_use_id: str | None, context: Any) -> Input:
    """Refuse any command that runs foo.sh; the model reads the reason."""
    command = input_data["tool_input"].get("command", "")
    if "foo.sh" in command:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "foo.sh is not to be run",
            }
        }
    return {}


async def review_output(input_data: Input, tool_use_id: str | None, context: Any) -> Input:
    """Tell the model to look again when a command's output mentions an error."""
    if "error" in str(input_data.get("tool_response", "")).lower():
        return {"hookSpecificOutput": {"additionalContext": "The command failed: look at why."}}
    return {}


async def stop_on_secrets(input_data: Input, tool_use_id: str | None, context: Any) -> Input:
    """End the prompt at once when a command would print the environment."""
    if input_data["tool_input"].get("command", "").startswith("env"):
        return {"continue": False, "stopReason": "printing the environment is not allowed"}
    return {}


async def run(hooks: dict[str, list[HookMatcher]], prompt: str) -> None:
    options = PeriOptions(permission_mode="bypassPermissions", hooks=hooks)
    async with PeriClient(options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            show(message)


EXAMPLES = {
    "PreToolUse": ({"PreToolUse": [HookMatcher("Bash", [block_scripts])]}, "Run ./foo.sh"),
    "PostToolUse": ({"PostToolUse": [HookMatcher("Bash", [review_output])]}, "Run ls /nowhere"),
    "continue": ({"PreToolUse": [HookMatcher("Bash", [stop_on_secrets])]}, "Show the env"),
}


async def main(names: list[str]) -> None:
    for name in names or list(EXAMPLES):
        if name not in EXAMPLES:
            sys.exit(f"no example {name!r}; one of: {', '.join(EXAMPLES)}")
        print(f"=== {name} ===")
        await run(*EXAMPLES[name])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
