"""What an MCP server entry (Claude Code's `mcpServers` format) runs, as written in its file.

The trust dialog and the question about a project server added later both show this, so the user
sees everything that decides what runs and where data goes: the command and its arguments, the
working directory, every environment variable, the URL and every header. Values are shown as
written, `${VAR}` unexpanded: a secret the entry pulls from the environment is not printed, but
its use (and where it would be sent) is visible. The text comes from the repository: callers pass
it through `textsafe.visible`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

Transport = Literal["stdio", "http", "sse", "sdk"]  # sdk: a program's own, in its process

TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamableHttp": "http",
    "sse": "sse",
    "sdk": "sdk",
}

# A word that needs quotes to show where it begins and ends (or that it is empty).
_NEEDS_QUOTES = re.compile(r"""^$|[\s"'\\]""")


def entry_transport(entry: Mapping[str, Any]) -> Transport | None:
    """The transport the entry asks for; None for an unknown `type`."""
    kind = entry.get("type")
    if kind is None:
        return "http" if "url" in entry and "command" not in entry else "stdio"
    return TRANSPORTS.get(kind) if isinstance(kind, str) else None


def describe_entry(entry: Any) -> list[tuple[str, str]]:
    """(label, text) pairs, one per thing the entry decides: `runs`, `cwd`, `env` for a stdio
    server; `connects to`, `header` for a URL. Fields of the wrong type are left out (such an
    entry is reported and never started)."""
    if not isinstance(entry, Mapping):
        return []
    transport = entry_transport(entry)
    parts: list[tuple[str, str]] = []
    if transport == "sdk":  # `create_sdk_mcp_server`: tool functions of the program itself
        name = entry.get("name")
        shown = _word(name) if isinstance(name, str) else "sdk"
        return [("runs", f"in the program's process ({shown})")]
    if transport == "stdio":
        words = [entry.get("command")]
        args = entry.get("args")
        words += args if isinstance(args, list) else []
        shown = " ".join(_word(w) for w in words if isinstance(w, str))
        if shown:
            parts.append(("runs", shown))
        if isinstance(entry.get("cwd"), str):
            parts.append(("cwd", _word(entry["cwd"])))
        parts += [("env", pair) for pair in _pairs(entry.get("env"))]
        return parts
    if isinstance(entry.get("url"), str):
        kind = f" ({transport})" if transport else ""
        parts.append(("connects to", _word(entry["url"]) + kind))
    parts += [("header", pair) for pair in _pairs(entry.get("headers"))]
    return parts


def describe_line(entry: Any) -> str:
    """`describe_entry` on one line: 'runs: node x.js; cwd: sub; env: A=1'."""
    return "; ".join(f"{label}: {text}" for label, text in describe_entry(entry))


def _pairs(value: Any) -> list[str]:
    if not isinstance(value, Mapping):
        return []
    pairs = [(k, v) for k, v in value.items() if isinstance(k, str) and isinstance(v, str)]
    return [f"{k}={_word(v)}" for k, v in pairs]


def _word(text: str) -> str:
    return json.dumps(text, ensure_ascii=False) if _NEEDS_QUOTES.search(text) else text
