"""The two tools `peri mcp serve` offers, as a client lists them: `peri` starts a session and runs
a prompt to its end, `peri_reply` continues one (in the manner of `codex mcp-server`)."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from peri_cli.mcpserve.bounds import STRICTNESS, Bounds

OUTPUT = {
    "type": "object",
    "properties": {
        "session_id": {"type": "string", "description": "continue it with peri_reply"},
        "result": {"type": "string", "description": "Peri's final answer"},
        "is_error": {"type": "boolean"},
        "error": {"type": "string"},
        "num_turns": {"type": "integer"},
        "usage": {"type": "object"},
        "permission_mode": {"type": "string"},
        "permission_denials": {"type": "array", "items": {"type": "object"}},
        "warnings": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["session_id", "result", "is_error"],
}


def tool_list(bounds: Bounds) -> list[types.Tool]:
    allowed = STRICTNESS[: STRICTNESS.index(bounds.mode) + 1]
    where = (
        f"a folder inside {bounds.root}"
        if bounds.root is not None
        else f"only this server's folder {bounds.here}"
    )
    turns = f" (at most {bounds.max_turns})" if bounds.max_turns is not None else ""
    peri_input: dict[str, Any] = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "the task for Peri"},
            "cwd": {
                "type": "string",
                "description": f"the workspace folder: {where} (default: {bounds.allowed})",
            },
            "permission_mode": {
                "type": "string",
                "enum": list(allowed),
                "description": f"default {bounds.mode}; none looser than this server's bound",
            },
            "model": {"type": "string", "description": "the model to use (default: Peri's)"},
            "max_turns": {
                "type": "integer",
                "minimum": 1,
                "description": f"model calls for this prompt{turns}",
            },
        },
        "required": ["prompt"],
    }
    reply_input = {
        "type": "object",
        "properties": {
            "session_id": {"type": "string", "description": "the session_id a peri call returned"},
            "prompt": {"type": "string", "description": "the next message in that session"},
        },
        "required": ["session_id", "prompt"],
    }
    return [
        types.Tool(
            name="peri",
            description=(
                "Run Peri, a coding agent, on a task in a workspace folder: it reads, edits and "
                "runs commands there as its permission mode allows, and returns its final answer "
                "and a session_id to continue with peri_reply."
            ),
            input_schema=peri_input,
            output_schema=OUTPUT,
        ),
        types.Tool(
            name="peri_reply",
            description="Continue a Peri session with another message; returns its answer.",
            input_schema=reply_input,
            output_schema=OUTPUT,
        ),
    ]
