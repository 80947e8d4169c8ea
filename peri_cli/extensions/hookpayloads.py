"""What a hook is sent: the JSON object on its stdin, with Claude Code's field names, one
builder per event."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peri_cli.extensions.hooks import CompactTrigger, HookEvent, SessionStartSource


@dataclass(frozen=True)
class SessionInfo:
    """The fields every hook event carries."""

    session_id: str
    transcript_path: Path
    cwd: Path
    permission_mode: str = "default"


def payload(event: HookEvent, info: SessionInfo, **fields: Any) -> dict[str, Any]:
    """The JSON object a hook reads on stdin (Claude Code's field names)."""
    return {
        "session_id": info.session_id,
        "transcript_path": str(info.transcript_path),
        "cwd": str(info.cwd),
        "permission_mode": info.permission_mode,
        "hook_event_name": event,
        **fields,
    }


def pre_tool_use(
    info: SessionInfo, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str
) -> dict[str, Any]:
    return payload(
        "PreToolUse",
        info,
        tool_name=tool_name,
        tool_input=dict(tool_input),
        tool_use_id=tool_use_id,
    )


def post_tool_use(
    info: SessionInfo,
    tool_name: str,
    tool_input: Mapping[str, Any],
    tool_use_id: str,
    tool_response: Any,
) -> dict[str, Any]:
    return payload(
        "PostToolUse",
        info,
        tool_name=tool_name,
        tool_input=dict(tool_input),
        tool_use_id=tool_use_id,
        tool_response=tool_response,
    )


def user_prompt_submit(info: SessionInfo, prompt: str) -> dict[str, Any]:
    return payload("UserPromptSubmit", info, prompt=prompt)


def session_start(info: SessionInfo, source: SessionStartSource) -> dict[str, Any]:
    return payload("SessionStart", info, source=source)


def stop(info: SessionInfo, stop_hook_active: bool) -> dict[str, Any]:
    return payload("Stop", info, stop_hook_active=stop_hook_active)


def pre_compact(
    info: SessionInfo, trigger: CompactTrigger, custom_instructions: str = ""
) -> dict[str, Any]:
    return payload("PreCompact", info, trigger=trigger, custom_instructions=custom_instructions)


def encode_payload(data: Mapping[str, Any]) -> bytes:
    """UTF-8 JSON; anything JSON cannot hold is shown as text, lone surrogates replaced."""
    return json.dumps(data, ensure_ascii=False, default=str).encode("utf-8", "replace")
