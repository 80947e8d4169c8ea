"""Claude Code-compatible command hooks: the `hooks` settings, what each hook is sent on stdin,
and what its exit code and output mean. Running them is `hookrun.py`; this part is pure.

Exit 0 goes on (the stdout of UserPromptSubmit and SessionStart hooks is context for the model),
exit 2 blocks with stderr as the reason, any other code is reported and ignored. JSON on stdout
(`decision`, `reason`, `continue`, `stopReason`, `systemMessage`, `hookSpecificOutput` with
`permissionDecision` or `additionalContext`) is honoured. Hooks from the workspace's own settings
run only in a trusted workspace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from peri_cli.base.settings import SettingsLayer
from peri_cli.base.textsafe import scrub_surrogates, visible
from peri_cli.permissions.rules import RuleSource
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
MAX_STOP_HOOK_ROUNDS = 5  # a Stop hook that keeps blocking is overruled after this many rounds
MAX_TEXT_CHARS = 10_000  # context or a reason longer than this is cut
_SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")

Permission = Literal["allow", "ask", "deny"]
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


def hooks_from_settings(value: Any, source: RuleSource) -> tuple[list[Hook], list[str]]:
    """The `hooks` value of one settings file (raw JSON) -> its hooks and, one line each, what
    was wrong with it. A bad entry is skipped and reported, never fatal."""
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
        config.extend(hooks_from_settings(layer.data.get("hooks"), source))
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


# --- what a hook is sent ----------------------------------------------------------------------


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


# --- what a hook's answer means -----------------------------------------------------------------


@dataclass(frozen=True)
class HookRun:
    """What one hook did: its exit code (None when it did not finish) and its output."""

    hook: Hook
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None  # it could not be started


@dataclass(frozen=True)
class HookOutcome:
    """What the hooks of one event decided, together.

    `blocked` means, per event: PreToolUse — do not run the call, `reason` goes to the model as
    its result; PostToolUse — `reason` goes to the model beside the result; UserPromptSubmit —
    the prompt is dropped, `reason` is shown to the user; Stop — keep going, `reason` goes to the
    model. SessionStart and PreCompact cannot block. `context` is text for the model
    (UserPromptSubmit, SessionStart, PostToolUse). `messages` are one line each for the user.
    `stop_reason` (`"continue": false`) ends the turn, shown to the user."""

    blocked: bool = False
    reason: str = ""
    permission: Permission | None = None  # PreToolUse: a hook's allow / ask / deny
    permission_reason: str = ""
    context: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    stop_reason: str | None = None


_BLOCKING = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"})
_PLAIN_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
_JSON_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart", "PostToolUse"})
_RANK: dict[Permission, int] = {"deny": 0, "ask": 1, "allow": 2}


@dataclass
class _Acc:
    blocked: bool = False
    reasons: list[str] = field(default_factory=list)
    permission: Permission | None = None
    permission_reason: str = ""
    context: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    stop_reason: str | None = None

    def block(self, event: HookEvent, hook: Hook, reason: str) -> None:
        if event in _BLOCKING:
            self.blocked = True
            self.reasons.append(_cut(reason) or f"blocked by the {hook.label()}")
            if event == "PreToolUse":
                self.permit("deny", "")
        else:
            self.messages.append(_line(f"{hook.label()}: {reason or 'exit code 2'}"))

    def permit(self, decision: Permission, reason: str) -> None:
        if self.permission is None or _RANK[decision] < _RANK[self.permission]:
            self.permission = decision
            self.permission_reason = reason


def interpret(event: HookEvent, runs: Sequence[HookRun]) -> HookOutcome:
    """Fold the runs of one event's hooks into one outcome (any block wins; for permissions
    deny beats ask beats allow; context and messages keep the hooks' order)."""
    acc = _Acc()
    for run in runs:
        _one(event, run, acc)
    return HookOutcome(
        blocked=acc.blocked,
        reason="\n".join(acc.reasons),
        permission=acc.permission,
        permission_reason=acc.permission_reason,
        context=tuple(acc.context),
        messages=tuple(acc.messages),
        stop_reason=acc.stop_reason,
    )


def _one(event: HookEvent, run: HookRun, acc: _Acc) -> None:
    hook = run.hook
    if run.error is not None:
        acc.messages.append(_line(f"{hook.label()} could not start: {run.error}"))
        return
    if run.timed_out or run.exit_code is None:
        acc.messages.append(_line(f"{hook.label()} timed out after {hook.timeout:g} s; ignored"))
        return
    if run.exit_code == 2:
        acc.block(event, hook, run.stderr.strip())
        return
    if run.exit_code != 0:
        how = (
            f"was killed by signal {-run.exit_code}"
            if run.exit_code < 0
            else f"failed with exit code {run.exit_code}"
        )
        first = run.stderr.strip().splitlines()[:1]
        acc.messages.append(_line(f"{hook.label()} {how}" + (f": {first[0]}" if first else "")))
        return
    text = run.stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            data = None
        if not isinstance(data, dict):
            acc.messages.append(
                _line(f"{hook.label()} printed output that is not valid JSON; ignored")
            )
            return
        _json_answer(event, hook, data, acc)
    elif text and event in _PLAIN_CONTEXT:
        acc.context.append(_cut(text))


def _json_answer(event: HookEvent, hook: Hook, data: Mapping[str, Any], acc: _Acc) -> None:
    bad: list[str] = []

    def text(key: str, source: Mapping[str, Any] = data) -> str:
        value = source.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            bad.append(key)
            return ""
        return value

    if (message := text("systemMessage")).strip():
        acc.messages.append(_line(f"{hook.label()}: {message}"))
    go_on = data.get("continue", True)
    if go_on is False:
        acc.stop_reason = _cut(text("stopReason")) or f"stopped by the {hook.label()}"
    elif go_on is not True:
        bad.append("continue")
    specific = data.get("hookSpecificOutput")
    if specific is not None and not isinstance(specific, dict):
        bad.append("hookSpecificOutput")
        specific = None
    specific = specific or {}
    _decisions(event, hook, data, specific, text("reason"), text, bad, acc)
    if event in _JSON_CONTEXT and (extra := text("additionalContext", specific)).strip():
        acc.context.append(_cut(extra))
    if bad:
        keys = ", ".join(dict.fromkeys(bad))
        acc.messages.append(
            _line(f"{hook.label()} printed JSON with bad values for {keys}; those ignored")
        )


def _decisions(  # noqa: PLR0917 - one step of _json_answer
    event: HookEvent,
    hook: Hook,
    data: Mapping[str, Any],
    specific: Mapping[str, Any],
    reason: str,
    text: Callable[[str, Mapping[str, Any]], str],
    bad: list[str],
    acc: _Acc,
) -> None:
    """`decision` ("block"/"approve") and PreToolUse's `permissionDecision`."""
    decision = data.get("decision")
    if decision == "block":
        acc.block(event, hook, reason)
    elif decision == "approve":
        if event == "PreToolUse":
            acc.permit("allow", reason)
    elif decision not in (None, "undefined"):
        bad.append("decision")
    if event == "PreToolUse" and "permissionDecision" in specific:
        chosen = specific.get("permissionDecision")
        why = text("permissionDecisionReason", specific)
        if chosen == "deny":
            acc.block(event, hook, why)
        elif chosen in ("allow", "ask"):
            acc.permit(chosen, why)
        else:
            bad.append("hookSpecificOutput.permissionDecision")


def _cut(text: str) -> str:
    text = scrub_surrogates(text.strip())
    if len(text) > MAX_TEXT_CHARS:
        return text[:MAX_TEXT_CHARS] + f"\n[cut: {len(text) - MAX_TEXT_CHARS} more characters]"
    return text


def _line(text: str) -> str:
    """One line, safe to show on a terminal, of reasonable length."""
    flat = " ".join(text.split())
    if len(flat) > 300:
        flat = flat[:297] + "..."
    return visible(flat)


# --- Stop hooks that never let go ---------------------------------------------------------------


@dataclass
class StopGuard:
    """Counts the rounds Stop hooks kept the agent going since the user last spoke; after
    `limit` of them the agent stops anyway, so a hook that always blocks cannot loop forever."""

    limit: int = MAX_STOP_HOOK_ROUNDS
    rounds: int = 0

    @property
    def active(self) -> bool:
        """`stop_hook_active` for the next Stop payload: already going on because of a hook."""
        return self.rounds > 0

    def keep_going(self, outcome: HookOutcome) -> tuple[bool, str | None]:
        """(whether to run another round, a message for the user when a hook was overruled)."""
        if not outcome.blocked or outcome.stop_reason is not None:
            self.rounds = 0
            return False, None
        if self.rounds >= self.limit:
            self.rounds = 0
            return False, (
                f"Stop hooks kept the agent going {self.limit} times in a row; stopped anyway"
            )
        self.rounds += 1
        return True, None

    def reset(self) -> None:
        """A new prompt from the user."""
        self.rounds = 0
