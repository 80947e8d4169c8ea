"""What a program tells Peri (CONTRACT.md §8): `PeriOptions`, and the permission callback's
answers (`Allow`, `Deny`) and question (`PermissionContext`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, Literal

from peri_cli.base.questions import Asking
from peri_cli.base.tool import FilePort

Remember = Literal["session", "project"]
SettingSource = Literal["user", "project", "local"]


@dataclass(frozen=True)
class PermissionUpdate:
    """The Claude Agent SDK's permission change, in its shape. Peri reads `setMode` (with
    `mode`) in an answer to ExitPlanMode: the mode the approved plan runs in."""

    type: Literal[
        "addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"
    ]
    mode: str | None = None
    rules: Sequence[Any] | None = None
    behavior: Literal["allow", "deny", "ask"] | None = None
    destination: str | None = None
    directories: Sequence[str] | None = None


@dataclass(frozen=True)
class Allow:
    """Run the call, with `updated_input` instead of the model's when given. `remember`:
    "session" keeps the suggested rule for this session, "project" also writes it to
    `.peri/settings.local.json` (the TUI's "allow for this session" / "always in this project").
    `keep_in`: for a sandbox's Network question, the settings layer "project" writes the domain
    to: "local" (the default), "project" (`.peri/settings.json`) or "user" (PERI_HOME's)."""

    updated_input: dict[str, Any] | None = None
    remember: Remember | None = None
    keep_in: SettingSource | None = None
    updated_permissions: Sequence[PermissionUpdate] | None = None


@dataclass(frozen=True)
class Deny:
    """Do not run the call; the model is told `message`. `remember` keeps the suggested rule as
    a deny rule for the session or the project."""

    message: str = ""
    remember: Remember | None = None


@dataclass(frozen=True)
class PermissionContext:
    """What the callback knows about the question besides the tool's name and input."""

    session_id: str
    tool_use_id: str
    suggested_rule: str | None  # the rule `remember` keeps (None: no rule fits, e.g. outside)
    suggestions: tuple[str, ...] = ()  # every rule `remember` keeps (a compound command's parts)
    reason: str = ""  # why Peri asks ("runs a command", "writes outside the workspace: ...")
    agent: str | None = None  # the SubAgent asking, None for the main agent
    # AskUserQuestion and ExitPlanMode: the question with options, as every face shows it.
    asking: Asking | None = None


CanUseTool = Callable[[str, dict[str, Any], PermissionContext], Awaitable[Allow | Deny]]


@dataclass
class PeriOptions:
    """How to run Peri; every field is optional."""

    cwd: str | PathLike[str] | None = None  # the workspace (default: the process's directory)
    provider: Literal["anthropic", "openai"] | None = None
    model: str | None = None
    permission_mode: Literal["default", "accept-edits", "plan", "bypass"] | None = None
    allowed_tools: Sequence[str] = ()  # permission rules, e.g. "Bash(git diff:*)"
    disallowed_tools: Sequence[str] = ()
    can_use_tool: CanUseTool | None = None  # asked where the TUI would ask; None: denied
    append_system_prompt: str | None = None  # added to a new session's frozen system prompt
    max_turns: int | None = None  # model calls per prompt
    resume: str | None = None  # a session id (or a unique prefix of 8+ characters)
    fork_session: bool = False  # with resume / continue_conversation: continue in a copy
    continue_conversation: bool = False  # the most recent session here that got an answer
    setting_sources: Sequence[SettingSource] | None = None  # None: no settings file is read
    peri_home: str | PathLike[str] | None = None  # default: $PERI_HOME, else ~/.peri
    env: Mapping[str, str] = field(default_factory=dict)  # on top of the process environment
    mcp_servers: Mapping[str, Any] | None = None  # the `.mcp.json` shape, counted as the user's
    sandbox: Mapping[str, Any] | None = None  # the `sandbox` settings object (CONTRACT.md §10)
    include_partial_messages: bool = False  # text/thinking deltas and SubAgent progress too
    files: FilePort | None = None  # Read, Edit and Write through the caller
    # (last: Claude Agent SDK hooks) {"PreToolUse": [HookMatcher("Bash", [fn])]}: `hookmatchers`
    hooks: Mapping[str, Sequence[Any]] | None = None
