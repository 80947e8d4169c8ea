"""What a program tells Peri (CONTRACT.md §8): `PeriOptions`, and the permission callback's
answers (`Allow`, `Deny`) and question (`PermissionContext`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from peri_cli.base.modes import MODES, Mode
from peri_cli.base.questions import Asking
from peri_cli.base.tool import FilePort
from peri_cli.sdk.agentdefs import AgentDefinition, check_agents
from peri_cli.sdk.errors import OptionError
from peri_cli.sdk.promptchoice import check_system_prompt, check_tools

Remember = Literal["session", "project"]
SettingSource = Literal["user", "project", "local"]
SETTING_SOURCES = ("user", "project", "local")
PROVIDERS = ("anthropic", "openai")
# Peri's modes (CONTRACT.md §6) and the Claude Agent SDK's names for them; `dontAsk` is
# `default` with every question denied (as headless), the callback never asked.
PermissionMode = Literal[
    "default", "accept-edits", "plan", "bypass", "acceptEdits", "bypassPermissions", "dontAsk"
]
MODE_ALIASES: dict[str, Mode] = {
    "acceptEdits": "accept-edits",
    "bypassPermissions": "bypass",
    "dontAsk": "default",
}
NO_QUESTIONS = "dontAsk"
_HINTS = {
    "auto": "Peri has no auto mode; use 'default' (questions go to can_use_tool) or "
    "'accept-edits' (edits in the workspace run unasked)",
    "ask": "use 'default'",
    "yolo": "use 'bypass' (everything runs)",
}


def peri_mode(name: object, option: str = "permission_mode") -> Mode:
    """A mode name (Peri's or the Claude Agent SDK's) as Peri's mode; OptionError otherwise,
    with a hint naming the Peri mode to use."""
    if isinstance(name, str) and name in MODES:
        return name
    if isinstance(name, str) and name in MODE_ALIASES:
        return MODE_ALIASES[name]
    known = ", ".join([*MODES, *MODE_ALIASES])
    hint = _HINTS.get(name, f"one of {known}") if isinstance(name, str) else f"one of {known}"
    raise OptionError(option, f"unknown permission mode {name!r}: {hint}")


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
    permission_mode: PermissionMode | None = None  # §6, or acceptEdits/bypassPermissions/dontAsk
    allowed_tools: Sequence[str] = ()  # permission rules, e.g. "Bash(git diff:*)"
    disallowed_tools: Sequence[str] = ()
    can_use_tool: CanUseTool | None = None  # asked where the TUI would ask; None: denied
    append_system_prompt: str | None = None  # added to a new session's frozen system prompt
    # A string replaces the prompt Peri writes; {"type": "preset", "preset": "peri" (or
    # "claude_code"), "append": "..."} keeps it. Frozen into a new session (`promptchoice`).
    system_prompt: str | Mapping[str, Any] | None = None
    agents: Mapping[str, AgentDefinition] | None = None  # SubAgent types; beat `.claude/agents`
    # Only these built-in tools (None or {"type": "preset", ...}: all; []: none); MCP unaffected.
    tools: Sequence[str] | Mapping[str, Any] | None = None
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
    # {"type": "json_schema", "schema": {...}}: each prompt's answer is a JSON value fitting the
    # schema (an object), given through the StructuredOutput tool (`result.structured_output`)
    output_format: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        """Refuse a bad value now, naming the option (an `OptionError`, a `PeriError`)."""
        if self.permission_mode is not None:
            peri_mode(self.permission_mode)
        if self.provider is not None and self.provider not in PROVIDERS:
            raise OptionError("provider", f"{self.provider!r} is not one of {', '.join(PROVIDERS)}")
        turns = self.max_turns
        if turns is not None and (not isinstance(turns, int) or isinstance(turns, bool)):
            raise OptionError("max_turns", f"must be a whole number, not {turns!r}")
        if turns is not None and turns < 1:
            raise OptionError("max_turns", f"must be at least 1, not {turns}")
        if self.cwd is not None:
            _check_cwd(self.cwd)
        if self.output_format is not None:
            from peri_cli.sdk.structured import output_schema

            output_schema(self.output_format)
        for name in ("allowed_tools", "disallowed_tools"):
            _check_strings(name, getattr(self, name))
        check_system_prompt(self.system_prompt, self.append_system_prompt)
        check_agents(self.agents)
        check_tools(self.tools)
        if self.setting_sources is not None:
            _check_strings("setting_sources", self.setting_sources)
            for source in self.setting_sources:
                if source not in SETTING_SOURCES:
                    raise OptionError(
                        "setting_sources",
                        f"{source!r} is not one of {', '.join(SETTING_SOURCES)}",
                    )

    @property
    def peri_mode(self) -> Mode | None:
        """The Peri mode `permission_mode` names (None: the settings' own)."""
        return None if self.permission_mode is None else peri_mode(self.permission_mode)

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema `output_format` gives (None: answers are text)."""
        if self.output_format is None:
            return None
        from peri_cli.sdk.structured import output_schema

        return output_schema(self.output_format)

    @property
    def asks(self) -> bool:
        """False under `dontAsk`: every question is denied, `can_use_tool` is never called."""
        return self.permission_mode != NO_QUESTIONS


def _check_cwd(cwd: object) -> None:
    if not isinstance(cwd, str | PathLike):
        raise OptionError("cwd", f"must be a path, not {type(cwd).__name__}")
    path = Path(cwd).expanduser()
    if not path.exists():
        raise OptionError("cwd", f"no such directory: {path}")
    if not path.is_dir():
        raise OptionError("cwd", f"not a directory: {path}")


def _check_strings(name: str, value: object) -> None:
    if isinstance(value, str) or not isinstance(value, Sequence | set | frozenset):
        raise OptionError(name, f"must be a list of strings, not {type(value).__name__}")
    for item in value:
        if not isinstance(item, str):
            raise OptionError(name, f"must be a list of strings, not one holding {item!r}")
