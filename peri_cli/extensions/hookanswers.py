"""What a hook's answer means. Exit 0 goes on (the stdout of UserPromptSubmit and SessionStart
hooks is context for the model), exit 2 blocks with stderr as the reason, any other code is
reported and ignored. JSON on stdout (`decision`, `reason`, `continue`, `stopReason`,
`systemMessage`, `hookSpecificOutput` with `permissionDecision` or `additionalContext`) is
honoured; a block without a reason takes its `systemMessage` as the reason. The runs of one
event fold into one outcome; `StopGuard` overrules a Stop hook that never lets go.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from peri_cli.base.textsafe import scrub_surrogates, visible
from peri_cli.extensions.hooks import Hook, HookEvent

MAX_STOP_HOOK_ROUNDS = 5  # a Stop hook that keeps blocking is overruled after this many rounds
MAX_TEXT_CHARS = 10_000  # context or a reason longer than this is cut

Permission = Literal["allow", "ask", "deny"]
# The result of a call a PreToolUse hook's `"continue": false` left unrun (one decided after it).
NOT_RUN_STOPPED = "Not run: a hook ended the turn before this call ran."


@dataclass(frozen=True)
class HookRun:
    """What one hook did: its exit code (None when it did not finish) and its output."""

    hook: Hook
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None  # it could not be started
    raised: str | None = None  # a Python hook (`callback`) raised this


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
    updated_input: dict[str, Any] | None = None  # PreToolUse: what runs instead


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
    updated_input: dict[str, Any] | None = None

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
        updated_input=acc.updated_input,
    )


def _one(event: HookEvent, run: HookRun, acc: _Acc) -> None:
    hook = run.hook
    if run.error is not None:
        acc.messages.append(_line(f"{hook.label()} could not start: {run.error}"))
        return
    if run.raised is not None:
        acc.messages.append(_line(f"{hook.label()} {run.raised}; ignored"))
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

    message = text("systemMessage")
    if message.strip():
        acc.messages.append(_line(f"{hook.label()}: {message}"))
    go_on = data.get("continue", data.get("continue_", True))  # (Python's answers: continue_)
    if go_on is False:
        acc.stop_reason = _cut(text("stopReason")) or f"stopped by the {hook.label()}"
    elif go_on is not True:
        bad.append("continue")
    specific = data.get("hookSpecificOutput")
    if specific is not None and not isinstance(specific, dict):
        bad.append("hookSpecificOutput")
        specific = None
    specific = specific or {}
    # A block that gives no reason is explained by its systemMessage (hookify writes only that).
    _decisions(event, hook, data, specific, text("reason") or message, text, bad, acc)
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
            acc.block(event, hook, why or reason)
        elif chosen in ("allow", "ask"):
            acc.permit(chosen, why)
        else:
            bad.append("hookSpecificOutput.permissionDecision")
    if event == "PreToolUse" and (changed := specific.get("updatedInput")) is not None:
        if isinstance(changed, dict):
            acc.updated_input = dict(changed)
        else:
            bad.append("hookSpecificOutput.updatedInput")


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
