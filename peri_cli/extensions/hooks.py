"""Claude Code-compatible command hooks: the events, and the `hooks` settings (or a plugin's
`hooks/hooks.json`) read into hooks (a bad entry is reported, never fatal). What a hook is sent
is `hookpayloads.py`, what its answer means `hookanswers.py`, running them `hookrun.py` (in the
background: `hookbackground.py`), the loop's calls `hookpoints.py`.

Hooks from the workspace's own settings run only in a trusted workspace. A hook's `if` is a
permission rule (`Bash(git commit:*)`): the hook runs only for a tool call the rule matches, as a
deny rule would match it (`rules.evaluate`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from peri_cli.base.settings import SettingsLayer
from peri_cli.base.textsafe import visible
from peri_cli.permissions.call_facts import Call, RuleContext
from peri_cli.permissions.rule_syntax import Rule, RuleError, RuleSource, parse_rule
from peri_cli.permissions.rules import evaluate
from peri_cli.permissions.trust import Loosening, WorkspaceFiles

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "SessionStart",
    "Stop",
    "PreCompact",
    "Notification",
]
EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
# Claude Code events Peri does not send (yet): configured ones are reported, not run.
UNSUPPORTED_EVENTS = frozenset(
    {"SubagentStop", "SessionEnd", "PermissionRequest", "PostToolUseFailure"}
)
# What `matcher` is matched against: the tool name, the session start's source, the trigger.
MATCHED_ON: dict[str, str] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "SessionStart": "source",
    "PreCompact": "trigger",
    "Notification": "notification_type",
}
DEFAULT_TIMEOUT = 600.0  # seconds: Claude Code gives command hooks 10 minutes
_SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")

SessionStartSource = Literal["startup", "resume", "clear", "compact"]
CompactTrigger = Literal["manual", "auto"]


TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})  # where an `if` condition is judged


@dataclass(frozen=True)
class Hook:
    """One configured command for one event. `env` is added to its environment (a plugin's
    `CLAUDE_PLUGIN_ROOT`), `plugin` names the plugin that brought it; `condition` is its `if`;
    a `background` hook runs without holding the loop, a `rewake` one wakes the agent on exit 2
    with `rewake_message` (and shows `rewake_summary` to the user)."""

    event: HookEvent
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    source: RuleSource = field(default_factory=lambda: RuleSource("user"))
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    plugin: str = ""
    condition: Rule | None = None
    background: bool = False
    rewake: bool = False
    rewake_message: str = ""
    rewake_summary: str = ""
    # A program's Python hook (`PeriOptions.hooks`): awaited as `callback(input, tool_use_id,
    # context)` instead of a command; its dict answers as a command's JSON would.
    callback: Callable[..., Any] | None = field(default=None, hash=False, compare=False)

    def applies(self, trusted: bool) -> bool:
        """A repository's hooks are commands it would run: only in a trusted workspace."""
        return trusted or not self.source.from_workspace

    def label(self) -> str:
        """Short and safe to show: event, command (cut), file (or plugin)."""
        command = " ".join(self.command.split()) or getattr(self.callback, "__name__", "callback")
        if len(command) > 60:
            command = command[:57] + "..."
        where = f"plugin {self.plugin}" if self.plugin else str(self.source)
        return visible(f"{self.event} hook `{command}` ({where})")


@dataclass(frozen=True)
class JudgedCall:
    """A tool call as the permission rules see it: what an `if` condition is judged on."""

    call: Call
    ctx: RuleContext


def condition_holds(rule: Rule, judged: JudgedCall) -> bool:
    """Whether `rule` names the call as a deny rule would (any part of a command, any file it
    touches); a command whose program is known only when it runs, or that cannot be checked,
    counts as named: the hook runs."""
    try:
        found = evaluate(judged.call, [rule], judged.ctx)
    except (OSError, ValueError, RuntimeError):
        return True
    return found.action == "deny" or found.may_be_denied


def plugin_env(root: Path) -> dict[str, str]:
    """What a plugin's hooks (and servers) find in their environment: its folder."""
    return {"CLAUDE_PLUGIN_ROOT": str(root), "PERI_PLUGIN_ROOT": str(root)}


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
    value: Any,
    source: RuleSource,
    *,
    quiet_events: bool = False,
    env: Mapping[str, str] | None = None,
    plugin: str = "",
) -> tuple[list[Hook], list[str]]:
    """The `hooks` value of one settings file (raw JSON) -> its hooks and, one line each, what
    was wrong with it. A bad entry is skipped and reported, never fatal. `quiet_events`: an
    event Peri does not run is skipped silently (a Claude Code file: its events are no mistake).
    `env` and `plugin` go on every hook (a plugin's root folder and name)."""
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
    base = Hook("Stop", "", source=source, env=dict(env or {}), plugin=plugin)
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
            hooks.extend(_group(event, group, f".{event}[{g}]", base, problem))
    return hooks, problems


def hooks_from_plugin(
    data: Any, source: RuleSource, *, env: Mapping[str, str] | None = None, plugin: str = ""
) -> tuple[list[Hook], list[str]]:
    """A plugin's `hooks/hooks.json` (`{"description": ..., "hooks": {...}}`, raw JSON) -> its
    hooks and problems, read as settings' `hooks` are (`source.path` names the file)."""
    if not isinstance(data, dict):
        return [], [visible(f"{source.path or source}: expected an object with `hooks`")]
    return hooks_from_settings(data.get("hooks"), source, env=env, plugin=plugin)


Problem = Callable[[str, str], None]


def _group(event: HookEvent, group: Any, key: str, base: Hook, problem: Problem) -> list[Hook]:
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
    base = dataclasses.replace(base, event=event, matcher=matcher)
    out = [_entry(entry, f"{key}.hooks[{n}]", base, problem) for n, entry in enumerate(entries)]
    return [hook for hook in out if hook is not None]


def _entry(entry: Any, where: str, base: Hook, problem: Problem) -> Hook | None:
    """One `{"type": "command", ...}` object; fields Peri does not know are ignored (a
    plugin's hooks.json may carry newer ones)."""
    if not isinstance(entry, dict):
        problem(where, "expected an object with type and command")
        return None
    if entry.get("type", "command") != "command":
        problem(f"{where}.type", "only command hooks are supported; ignored")
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        problem(f"{where}.command", "expected a non-empty string; ignored")
        return None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        problem(
            f"{where}.timeout", f"expected a positive number of seconds; using {DEFAULT_TIMEOUT:g}"
        )
        timeout = DEFAULT_TIMEOUT
    condition = entry.get("if")
    rule: Rule | None = None
    if condition is not None:
        rule = _condition(condition, base, f"{where}.if", problem)
        if rule is None:
            return None
    hook = dataclasses.replace(
        base, command=command, timeout=float(min(timeout, 86_400)), condition=rule
    )
    return _background(entry, hook, where, problem)


def _condition(value: Any, base: Hook, where: str, problem: Problem) -> Rule | None:
    """An `if` as a permission rule, or None (reported: the hook is skipped)."""
    if base.event not in TOOL_EVENTS:
        events = " and ".join(sorted(TOOL_EVENTS))
        problem(where, f"an `if` applies to tool events only ({events}); hook skipped")
        return None
    if not isinstance(value, str):
        problem(where, "expected a permission rule such as Bash(git commit:*); hook skipped")
        return None
    try:
        return parse_rule(value, "deny", base.source)
    except RuleError as e:
        problem(where, f"not a permission rule ({e}); hook skipped")
        return None


def _background(entry: Mapping[str, Any], hook: Hook, where: str, problem: Problem) -> Hook:
    """`async` and `asyncRewake` (which implies it), with `rewakeMessage`/`rewakeSummary`; a
    value Peri cannot read is reported once and the hook runs in line."""
    texts: dict[str, str] = {}
    for key in ("rewakeMessage", "rewakeSummary"):
        value = entry.get(key, "")
        if not isinstance(value, str):
            problem(f"{where}.{key}", "expected a string; ignored")
            value = ""
        texts[key] = value
    flags: dict[str, bool] = {}
    for key in ("async", "asyncRewake"):
        value = entry.get(key, False)
        if not isinstance(value, bool):
            problem(f"{where}.{key}", "expected true or false; the hook runs in line")
            return hook
        flags[key] = value
    return dataclasses.replace(
        hook,
        background=flags["async"] or flags["asyncRewake"],
        rewake=flags["asyncRewake"],
        rewake_message=texts["rewakeMessage"].strip(),
        rewake_summary=texts["rewakeSummary"].strip(),
    )


@dataclass
class HookConfig:
    """Every configured hook, in the order their settings files were read."""

    hooks: list[Hook] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def extend(self, found: tuple[list[Hook], list[str]]) -> None:
        self.hooks.extend(found[0])
        self.problems.extend(found[1])

    def select(
        self,
        event: HookEvent,
        payload: Mapping[str, Any],
        trusted: bool,
        judged: JudgedCall | None = None,
    ) -> list[Hook]:
        """The hooks that run for this event and payload (their matcher fits, and their `if`
        names `judged`, the tool call as the rules see it), trust allowing."""
        key = MATCHED_ON.get(event)
        value = payload.get(key) if key is not None else None
        name = value if isinstance(value, str) else None
        return [
            h
            for h in self.hooks
            if h.event == event
            and h.applies(trusted)
            and (key is None or matcher_matches(h.matcher, name))
            and (
                h.condition is None or (judged is not None and condition_holds(h.condition, judged))
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
