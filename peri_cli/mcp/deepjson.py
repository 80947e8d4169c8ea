"""A server message nested too deep for the SDK's JSON parser, recovered with the deep parts cut.

The SDK's parser (pydantic's) gives up past 200 levels and drops the whole line, so one tool
with a pathological schema made its server's `tools/list` go unanswered until the connect timeout.
Here the line's subtrees below `MAX_DEPTH` become a marker string; the message then parses, and
the schema check (`schema.py`) refuses the one tool whose schema holds it, by name.
"""

from __future__ import annotations

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

MAX_DEPTH = 100  # below the parser's limit, far above any schema a person writes
MARKER = "peri: nested too deep"
_MAX_LINE = 64 * 2**20  # longer lines are left dropped: the scan is linear, but memory is not free


def recover(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """`item` (what the SDK's reader produced), or the message it failed on when that failure
    was only the nesting depth."""
    line = _too_deep_line(item)
    if line is None:
        return item
    try:
        message = types.jsonrpc_message_adapter.validate_json(prune(line, MAX_DEPTH))
    except ValueError:
        return item
    return SessionMessage(message)


def _too_deep_line(item: object) -> str | None:
    if not isinstance(item, ValidationError):
        return None
    for error in item.errors():
        text = error.get("input")
        if (
            error.get("type") == "json_invalid"
            and "recursion limit" in error.get("msg", "")
            and isinstance(text, str)
            and len(text) <= _MAX_LINE
        ):
            return text
    return None


def prune(text: str, max_depth: int) -> str:
    """`text` (JSON) with every array or object that opens deeper than `max_depth` replaced by
    the string MARKER. Only brackets and strings are tracked: the parser judges the rest."""
    out: list[str] = []
    depth = 0
    skip_from: int | None = None  # the depth whose subtree is being cut
    in_string = escaped = False
    for ch in text:
        if in_string:
            if skip_from is None:
                out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch in "[{":
            depth += 1
            if skip_from is None and depth > max_depth:
                skip_from = depth
                out.append(f'"{MARKER}"')
        elif ch in "]}":
            depth -= 1
            if skip_from is not None and depth < skip_from:
                skip_from = None
                continue
        elif ch == '"':
            in_string = True
        if skip_from is None:
            out.append(ch)
    return "".join(out)
