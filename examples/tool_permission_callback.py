"""A permission callback that allows, redirects and denies (ported from the Claude Agent SDK's
`tool_permission_callback.py`: `PermissionResultAllow` -> `Allow`, `PermissionResultDeny` -> `Deny`,
`ToolPermissionContext` -> `PermissionContext`).
"""

import asyncio
import json
from typing import Any

from peri_cli.sdk import Allow, Deny, PeriClient, PeriOptions, PermissionContext, ResultEvent

asked: list[str] = []


async def decide(tool: str, tool_input: dict[str, Any], context: PermissionContext) -> Allow | Deny:
    asked.append(tool)
    print(f"Asked: {tool} {json.dumps(tool_input, sort_keys=True)}")
    if tool in ("Read", "Glob", "Grep"):
        return Allow()
    if tool in ("Write", "Edit"):
        path = tool_input.get("file_path", "")
        if path.startswith(("/etc/", "/usr/")):
            return Deny(f"Cannot write to a system folder: {path}")
        if not path.startswith("safe_output/"):
            # (the input the callback returns is what runs, and it is judged by the rules again)
            redirected = {**tool_input, "file_path": f"safe_output/{path.rsplit('/', 1)[-1]}"}
            print(f"Redirected to {redirected['file_path']}")
            return Allow(updated_input=redirected)
        return Allow()
    if tool == "Bash" and "rm -rf" in tool_input.get("command", ""):
        return Deny("Dangerous command pattern detected")
    return Allow(remember="session")  # keep context.suggestions for the rest of the session


async def main() -> None:
    options = PeriOptions(can_use_tool=decide)
    async with PeriClient(options) as client:
        await client.query("Write notes.txt saying hi, then clean up with rm -rf build")
        async for message in client.receive_response():
            if isinstance(message, ResultEvent):
                print(f"Result: {message.result}")
                print(f"Denied: {[d['tool_name'] for d in message.permission_denials]}")
    print(f"Tools asked about: {asked}")


if __name__ == "__main__":
    asyncio.run(main())
