"""What a user interface may ask of a run (the session host): its workspace, its session and
agent, and starting, switching or forking a session. The TUI depends on this protocol only;
the composition root (`runtime.py`) implements it, so no UI reaches providers or tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from peri_cli.agent.loop import Agent
    from peri_cli.agent.subagents import SubagentManager
    from peri_cli.base.modes import Mode
    from peri_cli.base.settings import LoadedSettings, Settings
    from peri_cli.base.tool import ToolTraits
    from peri_cli.context.meta import MetaState
    from peri_cli.extensions.custom_commands.catalog import CommandCatalog
    from peri_cli.extensions.hooks import SessionStartSource
    from peri_cli.extensions.output_styles import StyleCatalog
    from peri_cli.extensions.plugins.active import ActivePlugins
    from peri_cli.extensions.skills.catalog import SkillCatalog
    from peri_cli.extensions.statusline import StatusLineShown
    from peri_cli.permissions.trust import TrustState
    from peri_cli.session.store import Session, SessionStore


class StartupError(Exception):
    """Peri cannot start as asked; one line for stderr and an exit status."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class CommandError(Exception):
    """A slash command from an extension (an MCP prompt) that cannot run; one line to show."""


@dataclass(frozen=True)
class ExtraCommand:
    """A slash command that is not built in: a skill's `/<name>`, a custom command's (`kind`
    "command", `where` its origin: `project:frontend`) or an MCP server's prompt
    `/mcp__<server>__<prompt>`. `usage` and `description` come from files or servers: show them
    through `textsafe.visible`."""

    name: str  # without the leading `/`
    usage: str
    description: str
    kind: Literal["skill", "mcp", "command"]
    where: str = ""


@dataclass(frozen=True)
class ServerQuestion:
    """A project MCP server added after the workspace was trusted: asked about once before it
    starts. `what` ((label, text) pairs: command and args, cwd, env, url, headers, as written) and
    `source` come from the repository's files."""

    name: str
    what: tuple[tuple[str, str], ...]
    source: str


@dataclass(frozen=True)
class HeldPath:
    """A protected path a sandboxed command's git left in the workspace (tracked, so it stays
    as git left it) that Peri does not load until the user confirms it. `path` is relative to
    the workspace and comes from the repository."""

    path: str
    why: str


class SessionHost(Protocol):
    workspace: Path
    peri_home: Path
    env: Mapping[str, str]  # the run's environment (the process's, or the program's `env`)
    store: SessionStore
    provider_name: str
    model: str
    mode: Mode
    warnings: list[str]
    session: Session | None
    agent: Agent | None
    subagents: SubagentManager | None
    skills: SkillCatalog
    custom_commands: CommandCatalog  # `.claude/commands`, `~/.claude/commands`, plugins'
    plugins: ActivePlugins  # the enabled plugins, and those enabled but not installed
    trust: TrustState | None
    settings: Settings
    loaded: LoadedSettings | None  # the settings files as read, with where each value came from
    meta: MetaState  # the attached session's frozen Meta Harness state
    session_source: SessionStartSource  # how the attached session began (SessionStart hooks)

    @property
    def context_window(self) -> int: ...

    @property
    def credentials_problem(self) -> str | None:
        """Why no model can be reached (no key, no server), in words a user can act on."""
        ...

    @property
    def trust_pending(self) -> bool:
        """The workspace's trust must be asked about before the session starts."""
        ...

    def answer_trust(self, answer: bool | None) -> None: ...

    def start_new(self) -> Session: ...

    def start_existing(self, id_or_prefix: str, *, fork: bool) -> Session:
        """Resume or fork a session; StartupError when it cannot be opened."""
        ...

    def close(self) -> None: ...

    # The session's tools, as they describe themselves (the UI does not reach peri_cli.tools)

    def tool_traits(self, name: str) -> ToolTraits:
        """What the tool of that name says of itself; plain traits for one not registered."""
        ...

    def capability_tools(self) -> dict[str, list[str]]:
        """Each Meta Harness capability's built-in tools."""
        ...

    # The Bash sandbox (the UI does not reach peri_cli.sandbox itself)

    def sandbox_status(self) -> list[str]:
        """What `/sandbox` shows: on or off, its dependencies, resolved paths and domains."""
        ...

    def sandbox_switch(self, name: str, value: bool) -> str:
        """Turn `auto` (auto-allow) or `fallback` (unsandboxed commands) on or off, now and in
        `.peri/settings.local.json`; one line saying what happened."""
        ...

    def held_back(self) -> list[HeldPath]:
        """Protected paths held back and not asked about yet (a git checkout's `.mcp.json`)."""
        ...

    def confirm_held(self, path: str, load: bool | None) -> None:
        """Load it from now on (True), keep it held for the session (False), or ask later."""
        ...

    # MCP servers (the UI does not reach peri_cli.mcp itself)

    def mcp_statuses(self) -> list[str]:
        """One line per configured server (state, tools, why it failed), safe to show."""
        ...

    def mcp_reconnect(self, name: str) -> str:
        """Start a new connection attempt for `name`; one line saying what happened."""
        ...

    def mcp_prompt_commands(self) -> list[ExtraCommand]:
        """The prompts of the connected servers, as slash commands."""
        ...

    async def expand_mcp_prompt(self, text: str) -> str | None:
        """The message for `/mcp__<server>__<prompt> [args]`, waiting for a server that is still
        connecting; None when `text` names no configured server. CommandError when the prompt
        cannot be had (unknown prompt, bad arguments, the server failed)."""
        ...

    def server_questions(self) -> list[ServerQuestion]:
        """Project servers waiting for the user's word before they start (asked once)."""
        ...

    def answer_server(self, name: str, start: bool | None) -> str | None:
        """Start the server (True) or leave it off (False), remembered for this workspace;
        None: no answer, asked again next time. A warning line, if any."""
        ...

    # Output styles and the status line (Claude Code's; `sdk/styleside.py`)

    def output_styles(self) -> StyleCatalog:
        """Every output style as the files say now, and the files skipped."""
        ...

    @property
    def session_style(self) -> str:
        """The attached session's frozen output style ("Default" for none)."""
        ...

    def set_output_style(self, name: str) -> tuple[bool, str]:
        """Save `outputStyle` for new sessions; (saved, one line saying what happened)."""
        ...

    def style_note(self) -> str | None:
        """What `/clear` adds when the settings name another style than the session's."""
        ...

    @property
    def status_line_command(self) -> str | None:
        """The `statusLine` command in force, None for none."""
        ...

    async def run_status_line(
        self, *, cost_usd: float | None, context_tokens: int | None, duration_ms: int
    ) -> StatusLineShown:
        """Run the status line's command for the attached session; never raises."""
        ...
