"""Issue 40: a PreToolUse hook's `hookSpecificOutput.updatedInput` (a command's JSON or a Python
hook's dict) is what runs; a value that is not an object is reported and ignored."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from peri_cli.extensions import hookpayloads as h
from peri_cli.extensions.hookpayloads import SessionInfo
from peri_cli.extensions.hookrun import run_hooks
from peri_cli.extensions.hooks import Hook
from peri_cli.permissions.rule_syntax import RuleSource

USER = RuleSource("user", "~/.peri/settings.json")


async def pre(ws: Path, *hooks: Hook) -> Any:
    info = SessionInfo("s", ws / "t.jsonl", ws, "default")
    payload = h.payload(
        "PreToolUse", info, tool_name="Bash", tool_input={"command": "a"}, tool_use_id="t1"
    )
    return await run_hooks("PreToolUse", payload, list(hooks), cwd=ws, env=dict(os.environ))


def command(ws: Path, data: Any) -> Hook:
    path = ws / "hook.sh"
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(data)}\nEOF\n")
    path.chmod(0o755)
    return Hook("PreToolUse", str(path), source=USER)


async def test_a_command_hooks_updated_input(tmp_path: Path) -> None:
    changed = {"hookSpecificOutput": {"updatedInput": {"command": "b"}}}
    assert (await pre(tmp_path, command(tmp_path, changed))).updated_input == {"command": "b"}
    bad = {"hookSpecificOutput": {"updatedInput": "b"}}
    outcome = await pre(tmp_path, command(tmp_path, bad))
    assert outcome.updated_input is None
    assert "bad values for hookSpecificOutput.updatedInput" in outcome.messages[0]


async def test_a_python_hook_answers_as_a_command_would(tmp_path: Path) -> None:
    seen: list[Any] = []

    async def fn(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> Any:
        seen.append((dict(data["tool_input"]), tool_use_id, ctx))
        data["tool_input"]["command"] = "mutated"  # a copy: the call is not changed by this
        return {"hookSpecificOutput": {"updatedInput": {"command": "c"}}}

    async def slow(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> Any:
        import asyncio

        await asyncio.sleep(5)

    async def odd(data: dict[str, Any], tool_use_id: str | None, ctx: dict[str, Any]) -> Any:
        return ["not", "a", "dict"]

    hooks = [
        Hook("PreToolUse", "", source=USER, callback=fn),
        Hook("PreToolUse", "", timeout=0.1, source=USER, callback=slow),
        Hook("PreToolUse", "", source=USER, callback=odd),
    ]
    outcome = await pre(tmp_path, *hooks)
    assert seen == [({"command": "a"}, "t1", {"signal": None})]
    assert outcome.updated_input == {"command": "c"}
    assert any("`slow`" in m and "timed out" in m for m in outcome.messages), outcome.messages
    assert any("`odd`" in m and "answered a list, not a dict" in m for m in outcome.messages)
