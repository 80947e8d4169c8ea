"""Hooks as Python callbacks, in the Claude Agent SDK's shape (CONTRACT.md §14):
`PeriOptions(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[fn])]})`.

`async def fn(input_data, tool_use_id, context) -> dict` is sent what a command hook reads on
stdin and answers what it would print: `{"decision": "block", "reason": ...}`,
`{"hookSpecificOutput": {"permissionDecision": "deny" | "ask" | "allow",
"permissionDecisionReason": ..., "updatedInput": {...}, "additionalContext": ...}}`,
`{"continue": False, "stopReason": ...}` (or `continue_`, as that SDK spells it in Python),
`{"systemMessage": ...}`; `{}` goes on. They run after the settings files' and plugins' hooks,
on the program's event loop, in every session of the client (its SubAgents' calls too)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from peri_cli.agent.host import StartupError
from peri_cli.extensions.hooks import DEFAULT_TIMEOUT, EVENTS, Hook, HookEvent
from peri_cli.permissions.rule_syntax import RuleSource

HookCallback = Callable[[dict[str, Any], str | None, dict[str, Any]], Awaitable[dict[str, Any]]]
WHERE = "PeriOptions.hooks"


@dataclass
class HookMatcher:
    """The callbacks for the calls `matcher` names (as a settings file's matcher: empty or `*`
    all, `Edit|Write` exact names, other text a regular expression); `timeout` in seconds."""

    matcher: str | None = None
    hooks: Sequence[HookCallback] = field(default_factory=list)
    timeout: float | None = None


def program_hooks(given: Mapping[str, Sequence[HookMatcher]] | None) -> list[Hook]:
    """`PeriOptions.hooks` as hooks the loop runs; a StartupError naming what is wrong (the
    client's PeriError when it connects)."""
    try:
        return _hooks(given)
    except ValueError as e:
        raise StartupError(str(e), 2) from e


def _hooks(given: Mapping[str, Sequence[HookMatcher]] | None) -> list[Hook]:
    out: list[Hook] = []
    for event, matchers in (given or {}).items():
        if event not in EVENTS:
            raise ValueError(f"hooks: Peri sends no {event!r} event (it sends {', '.join(EVENTS)})")
        if isinstance(matchers, HookMatcher) or not isinstance(matchers, Sequence):
            raise ValueError(f"hooks[{event!r}]: a list of HookMatcher")
        for m in matchers:
            out.extend(_one(event, m))  # (checked: one of EVENTS)
    return out


def _one(event: HookEvent, m: object) -> list[Hook]:
    if not isinstance(m, HookMatcher):
        raise ValueError(f"hooks[{event!r}]: a HookMatcher, not {type(m).__name__}")
    matcher = m.matcher or ""
    try:
        re.compile(matcher)
    except re.error as e:
        raise ValueError(f"hooks[{event!r}]: matcher {matcher!r} cannot be read ({e})") from e
    timeout = DEFAULT_TIMEOUT if m.timeout is None else m.timeout
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"hooks[{event!r}]: timeout must be a positive number of seconds")
    hooks: list[Hook] = []
    for fn in m.hooks:
        if not callable(fn):
            raise ValueError(f"hooks[{event!r}]: {fn!r} is not a callable")
        source = RuleSource("user", f"<{WHERE}>")
        hooks.append(Hook(event, "", matcher, float(timeout), source, callback=fn))
    return hooks
