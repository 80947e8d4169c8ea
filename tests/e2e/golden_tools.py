"""The session's tools list in a golden file (the `init` line's, an unknown tool's error), as a
placeholder: a tool added to Peri changes no golden file. Each list is still checked, here,
wherever it is replaced."""

from __future__ import annotations

import json
import re

TOOLS_RE = re.compile(r'"tools": (\[[^\]]*\])')
NAMED_RE = re.compile(r"Available tools: ([A-Za-z0-9_]+(?:, [A-Za-z0-9_]+)*)\.")
CORE_TOOLS = {"Read", "Write", "Edit", "Bash", "Glob", "Grep"}  # every default session has them


def tools_placeholder(text: str) -> str:
    """`text` with each `"tools": [...]` replaced by `"tools": "<TOOLS>"`; AssertionError when a
    list is not sorted, has a name twice, or lacks one of the core tools."""

    text = TOOLS_RE.sub(lambda m: _checked(json.loads(m.group(1)), '"tools": "<TOOLS>"'), text)
    return NAMED_RE.sub(
        lambda m: _checked(m.group(1).split(", "), "Available tools: <TOOLS>."), text
    )


def _checked(names: list[str], placeholder: str) -> str:
    assert names == sorted(set(names)), f"a tools list is not sorted, each once: {names}"
    assert set(names) >= CORE_TOOLS, f"a tools list lacks core tools: {names}"
    return placeholder
