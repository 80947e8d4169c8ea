"""What a connected `PeriClient` tells its face without running anything: the model, the
mode, the commands a prompt may start with, tools' traits, the session's history."""

from __future__ import annotations

from peri_cli.base.tool import EditorKind, ToolTraits
from peri_cli.context.plan_mode import approved_plan
from peri_cli.extensions.commands import COMMANDS
from peri_cli.sdk.composed import Runtime
from peri_cli.sdk.errors import PeriError
from peri_cli.sdk.events import Event
from peri_cli.sdk.history import replay


class ClientViews:
    """The read-only half of `PeriClient` (its `runtime` once connected)."""

    runtime: Runtime | None
    _closed: bool

    @property
    def session_id(self) -> str:
        assert self.runtime is not None and self.runtime.session is not None, "not connected"
        return self.runtime.session.id

    @property
    def warnings(self) -> list[str]:
        """What the user should know about this run's settings, trust and session."""
        return list(self.runtime.warnings) if self.runtime is not None else []

    @property
    def model(self) -> str:
        """The model the next request uses."""
        return self._connected().model

    @property
    def mode(self) -> str:
        """The permission mode in force."""
        runtime = self._connected()
        return runtime.agent.policy.mode if runtime.agent is not None else str(runtime.mode)

    @property
    def approved_plan(self) -> str | None:
        """The plan of the session's latest approved `ExitPlanMode` call (None: none yet)."""
        session = self._connected().session
        return None if session is None else approved_plan(session.entries)

    @property
    def credentials_problem(self) -> str | None:
        """Why the provider cannot be reached (naming the variable that holds its key)."""
        return self._connected().credentials_problem

    async def list_models(self) -> list[str]:
        """The models the provider offers (its own list; none: just the current model)."""
        runtime = self._connected()
        lister = getattr(runtime.agent.provider if runtime.agent else None, "list_models", None)
        try:
            found = await lister() if lister is not None else None
        except Exception:  # a provider without a list, or unreachable: the current model only
            found = None
        names = list(found or [])
        return names if runtime.model in names else [runtime.model, *names]

    def commands(self) -> list[tuple[str, str, str]]:
        """What a prompt may start with: (name, description, argument hint) for the slash
        commands that run outside the TUI, the skills a person may invoke and the custom
        commands (each by the name that reaches it)."""
        runtime = self._connected()
        out = [(c.name, c.description, c.usage) for c in COMMANDS.values() if c.headless]
        out += [(s.name, s.description, s.argument_hint) for s in runtime.skills.for_user()]
        out += [
            (r.call, f"{r.command.description} ({r.command.where})", r.command.argument_hint)
            for r in runtime.custom_commands.rows()
        ]
        return out

    def tool_traits(self, name: str) -> ToolTraits:
        """What the session's tool of that name says of itself (its capability, card argument,
        editor kind, read-only, deferred); plain traits for a name it does not have."""
        return self._connected().tool_traits(name)

    def editor_kind(self, name: str) -> EditorKind:
        """How an editor shows a call of that tool (ACP's tool kind)."""
        return self.tool_traits(name).editor_kind

    def history(self) -> list[Event]:
        """The session's conversation so far as events (`UserEvent` for the person's prompts),
        in the order written: what an editor replays when it loads the session."""
        runtime = self._connected()
        assert runtime.session is not None
        return replay(runtime.session.entries, runtime.session.id)

    def denial_summary(self) -> str | None:
        """One line for a person: how many calls were denied and the flag that allows them."""
        runtime = self._connected()
        agent = runtime.agent
        if agent is None or not agent.denials:
            return None
        from peri_cli.sdk.summary import denial_summary

        return denial_summary(agent)

    def _connected(self) -> Runtime:
        if self._closed:
            raise PeriError("the client is closed (close() or disconnect()): make a new PeriClient")
        if self.runtime is None:
            raise PeriError("the client is not connected: use `async with PeriClient(...)`")
        return self.runtime
