"""`PeriOptions.system_prompt` and `PeriOptions.tools`, in the Claude Agent SDK's shapes: what a
new session's frozen prompt is, and which built-in tools the model is offered.

- `system_prompt`: a string replaces the prompt Peri writes (`promptside`); a preset
  `{"type": "preset", "preset": "peri" | "claude_code", "append": "..."}` keeps Peri's prompt
  (`claude_code` is an alias, so ported programs run) with `append` after it.
- `tools`: a list of built-in tool names (`[]`: none) or the preset
  `{"type": "preset", "preset": "claude_code" | "peri"}` (all). MCP tools are not affected."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from peri_cli.sdk.errors import OptionError

PRESETS = ("peri", "claude_code")
_PRESET_KEYS = frozenset({"type", "preset", "append"})
# Claude Code's names for tools Peri has under another name or not at all.
_TOOL_HINTS = {
    "Task": "Peri's SubAgent tool is 'Agent'",
    "MultiEdit": "Peri has 'Edit'",
    "BashOutput": "Peri's Bash reads background output itself",
    "KillShell": "Peri's Bash stops background commands itself",
}


def check_system_prompt(value: object, append_system_prompt: object) -> None:
    """OptionError naming `system_prompt` for a shape the Claude Agent SDK does not have."""
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, Mapping):
        raise OptionError(
            "system_prompt", f"must be a string or a preset dict, not {type(value).__name__}"
        )
    extra = sorted(set(value) - _PRESET_KEYS)
    if extra:
        raise OptionError("system_prompt", f"unknown key {extra[0]!r} (type, preset, append)")
    if value.get("type") != "preset":
        raise OptionError("system_prompt", 'a dict must have "type": "preset"')
    preset = value.get("preset")
    if preset not in PRESETS:
        raise OptionError("system_prompt", f"preset {preset!r} is not one of {', '.join(PRESETS)}")
    append = value.get("append")
    if append is not None and not isinstance(append, str):
        raise OptionError("system_prompt", f"append must be a string, not {type(append).__name__}")
    if append and append_system_prompt:
        raise OptionError(
            "system_prompt", "give the text to append once: its append or append_system_prompt"
        )


def prompt_parts(value: Any, append_system_prompt: str | None) -> tuple[str | None, str | None]:
    """(the text replacing Peri's prompt or None, the text appended to it or None)."""
    if isinstance(value, str):
        return value, append_system_prompt
    if isinstance(value, Mapping):
        return None, value.get("append") or append_system_prompt
    return None, append_system_prompt


def known_tools() -> list[str]:
    """The built-in tools' names `tools` may hold (the extra-tool wrappers come with whatever
    is deferred, so they are not chosen)."""
    from peri_cli.extensions.extra_tools import EXECUTE_NAME, SEARCH_NAME
    from peri_cli.tools import builtin_traits

    return [n for n in builtin_traits() if n not in (SEARCH_NAME, EXECUTE_NAME)]


def check_tools(value: object) -> None:
    """OptionError naming `tools` for anything but a list of known names or the preset."""
    if value is None:
        return
    if isinstance(value, Mapping):
        if value.get("type") != "preset" or value.get("preset") not in PRESETS:
            raise OptionError(
                "tools", f'a dict must be {{"type": "preset", "preset": "claude_code"}}: {value!r}'
            )
        return
    if isinstance(value, str) or not isinstance(value, Sequence | set | frozenset):
        raise OptionError("tools", f"must be a list of tool names, not {type(value).__name__}")
    known = known_tools()
    for name in value:
        if name not in known:
            hint = f" ({_TOOL_HINTS[name]})" if name in _TOOL_HINTS else ""
            raise OptionError(
                "tools", f"unknown built-in tool {name!r}{hint}; known: {', '.join(known)}"
            )


def builtin_names(value: Any) -> frozenset[str] | None:
    """The built-in tools to offer (None: all of them), from a checked `tools`."""
    if value is None or isinstance(value, Mapping):
        return None
    return frozenset(value)
