"""Claude Code-compatible command hooks: the events, and the `hooks` settings read into hooks
(a bad entry is reported, never fatal). What a hook is sent is `hookpayloads.py`, what its
answer means `hookanswers.py`, running them `hookrun.py`, the loop's calls `hookpoints.py`.

Hooks from the workspace's own settings run only in a trusted workspace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from peri_cli.base.settings import SettingsLayer
from peri_cli.base.textsafe import visible
from peri_cli.permissions.rule_syntax import RuleSource
from peri_cli.permissions.trust import Loosening, WorkspaceFiles

HookEvent = Literal[
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop", "PreCompact"
]
EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
# Claude Code events Peri does not send (yet): configured ones are reported, not run.
UNSUPPORTED_EVENTS = frozenset(
    {"Notification", "SubagentStop", "SessionEnd", "PermissionRequest", "PostToolUseFailure"}
)
# What `matcher` is matched against: the tool name, the session start's source, the trigger.
MATCHED_ON: dict[str, str] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "SessionStart": "source",
    "PreCompact": "trigger",
}
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code
_SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")

SessionStartSource = Literal["startup", "resume", "clear", "compact"]
CompactTrigger = Literal["manual", "auto"]


@dataclass(frozen=True)
class Hook:
    """One configured command for one event."""

    event: HookEvent
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    source: RuleSource = field(default_factory=lambda: RuleSource("user"))

    def applies(self, trusted: bool) -> bool:
        """A repository's hooks are commands it would run: only in a trusted workspace."""
        return trusted or not self.source.from_workspace

    def label(self) -> str:
        """Short and safe to show: event, command (cut), file."""
        command = " ".join(self.command.split())
        if len(command) > 60:
            command = command[:57] + "..."
        return visible(f"{self.event} hook `{command}` ({self.source})")


def matcher_matches(matcher: str, value: str | None) -> bool:
    """Claude Code's matcher: empty or `*` matches all; names joined by `|` match exactly;
    anything else is a regular expression searched in the value."""
    if matcher in ("", "*"):
        return True
    if value is None:
        return False
    if _SIMPLE_MATCHER.fullmatch(matcher):
        return value in matcher.split("|")
    try:
        return re.search(matcher, value) is not None
    except re.error:
        return False


def hooks_from_settings(
    value: Any, source: RuleSource, *, quiet_events: bool = False
) -> tuple[list[Hook], list[str]]:
    """The `hooks` value of one settings file (raw JSON) -> its hooks and, one line each, what
    was wrong with it. A bad entry is skipped and reported, never fatal. `quiet_events`: an
    event Peri does not run is skipped silently (a Claude Code file: its events are no mistake)."""
    hooks: list[Hook] = []
    problems: list[str] = []
    if value is None:
        return hooks, problems
    where = source.path or str(source)

    def problem(key: str, text: str) -> None:
        problems.append(visible(f"{where}: hooks{key}: {text}"))

    if not isinstance(value, dict):
        problem("", "expected an object of event names")
        return hooks, problems
    for event, groups in value.items():
        if event not in EVENTS:
            if quiet_events:
                continue
            known = ", ".join(EVENTS)
            why = "not supported by Peri" if event in UNSUPPORTED_EVENTS else "unknown event"
            problem(f".{event}", f"{why}; ignored (events: {known})")
            continue
        if not isinstance(groups, list):
            problem(f".{event}", "expected a list of {matcher, hooks} objects")
            continue
        for g, group in enumerate(groups):
            hooks.extend(_group(event, group, f".{event}[{g}]", source, problem))
    return hooks, problems


def _group(event: HookEvent, group: Any, key: str, source: RuleSource, problem: Any) -> list[Hook]:
    if not isinstance(group, dict):
        problem(key, "expected an object with matcher and hooks")
        return []
    matcher = group.get("matcher", "")
    if matcher is None:
        matcher = ""
    if not isinstance(matcher, str):
        problem(f"{key}.matcher", "expected a string; group ignored")
        return []
    if not (matcher in ("", "*") or _SIMPLE_MATCHER.fullmatch(matcher)):
        try:
            re.compile(matcher)
        except re.error as e:
            problem(f"{key}.matcher", f"not a valid regular expression ({e}); group ignored")
            return []
    entries = group.get("hooks")
    if not isinstance(entries, list):
        problem(f"{key}.hooks", "expected a list of commands; group ignored")
        return []
    out: list[Hook] = []
    for n, entry in enumerate(entries):
        where = f"{key}.hooks[{n}]"
        if not isinstance(entry, dict):
            problem(where, "expected an object with type and command")
            continue
        if entry.get("type", "command") != "command":
            problem(f"{where}.type", "only command hooks are supported; ignored")
            continue
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            problem(f"{where}.command", "expected a non-empty string; ignored")
            continue
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            problem(
                f"{where}.timeout",
                f"expected a positive number of seconds; using {DEFAULT_TIMEOUT:g}",
            )
            timeout = DEFAULT_TIMEOUT
        out.append(Hook(event, command, matcher, float(min(timeout, 86_400)), source))
    return out


@dataclass
class HookConfig:
    """Every configured hook, in the order their settings files were read."""

    hooks: list[Hook] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def extend(self, found: tuple[list[Hook], list[str]]) -> None:
        self.hooks.extend(found[0])
        self.problems.extend(found[1])

    def select(self, event: HookEvent, payload: Mapping[str, Any], trusted: bool) -> list[Hook]:
        """The hooks that run for this event and payload (their matcher fits), trust allowing."""
        key = MATCHED_ON.get(event)
        value = payload.get(key) if key is not None else None
        return [
            h
            for h in self.hooks
            if h.event == event
            and h.applies(trusted)
            and (
                key is None or matcher_matches(h.matcher, value if isinstance(value, str) else None)
            )
        ]

    def withheld(self, trusted: bool) -> list[Hook]:
        """Hooks from the workspace's files that do not run because it is not trusted."""
        return [h for h in self.hooks if not h.applies(trusted)]


def hook_config_from_layers(layers: Iterable[SettingsLayer]) -> HookConfig:
    """The `hooks` of every settings file, in the order the files were read."""
    config = HookConfig()
    for layer in layers:
        source = RuleSource(layer.scope, str(layer.path))
        quiet = layer.claude_code
        config.extend(hooks_from_settings(layer.data.get("hooks"), source, quiet_events=quiet))
    return config


def hook_loosenings(files: WorkspaceFiles) -> list[Loosening]:
    """A trust detector: every hook in the workspace's own settings files (a command it runs)."""
    out: list[Loosening] = []
    for layer in files.layers:
        if layer.from_workspace:
            found, _ = hooks_from_settings(
                layer.data.get("hooks"), RuleSource(layer.scope, str(layer.path))
            )
            for hook in found:
                what = f"{hook.event} hook `{' '.join(hook.command.split())[:200]}`"
                out.append(Loosening("hook", what, files.label(layer.path)))
    return out
