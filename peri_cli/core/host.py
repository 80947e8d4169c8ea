"""What a user interface may ask of a run (the session host): its workspace, its session and
agent, and starting, switching or forking a session. The TUI depends on this protocol only;
the composition root (`runtime.py`) implements it, so no UI reaches providers or tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from peri_cli.core.loop import Agent
    from peri_cli.core.meta import MetaState
    from peri_cli.core.modes import Mode
    from peri_cli.core.session import Session, SessionStore
    from peri_cli.core.settings import LoadedSettings, Settings
    from peri_cli.core.skills import SkillCatalog
    from peri_cli.core.subagents import SubagentManager
    from peri_cli.core.trust import TrustState


class StartupError(Exception):
    """Peri cannot start as asked; one line for stderr and an exit status."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class SessionHost(Protocol):
    workspace: Path
    peri_home: Path
    store: SessionStore
    provider_name: str
    model: str
    mode: Mode
    warnings: list[str]
    session: Session | None
    agent: Agent | None
    subagents: SubagentManager | None
    skills: SkillCatalog
    trust: TrustState | None
    settings: Settings
    loaded: LoadedSettings | None  # the settings files as read, with where each value came from
    meta: MetaState  # the attached session's frozen Meta Harness state

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
