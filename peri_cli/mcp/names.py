"""Names the model sees: `mcp__<server>__<tool>`, within what both providers accept.

Providers take tool names matching `^[a-zA-Z0-9_-]{1,64}$`, so other characters become `_` (as
Claude Code does) and a longer name keeps its start plus a short digest of the whole.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp"
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def clean(part: str) -> str:
    """`part` with every character a provider refuses replaced by `_`."""
    return _UNSAFE.sub("_", part) or "_"


def tool_prefix(server: str) -> str:
    return f"{PREFIX}__{clean(server)}__"


def tool_name(server: str, tool: str) -> str:
    """The wrapped name of one server tool, at most 64 characters."""
    name = tool_prefix(server) + clean(tool)
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def prompt_command(server: str, prompt: str) -> str:
    """The slash command (without `/`) a server prompt becomes."""
    return tool_prefix(server) + clean(prompt)
