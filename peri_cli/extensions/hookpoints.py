"""Where the agent loop calls the user's command hooks (configured in hooks.py, sent
hookpayloads.py, run by hookrun.py, answers read by hookanswers.py): one small object per
session that knows the session, the workspace's trust and the hook settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peri_cli.base.events import Notice
from peri_cli.extensions.hookanswers import HookOutcome, StopGuard
from peri_cli.extensions.hookpayloads import SessionInfo, payload
from peri_cli.extensions.hookrun import run_hooks
from peri_cli.extensions.hooks import HookConfig, HookEvent


@dataclass
class Hooks:
    config: HookConfig
    trusted: bool
    cwd: Path
    env: Mapping[str, str]
    session_id: str
    transcript_path: Path
    mode: Callable[[], str] = lambda: "default"
    guard: StopGuard = field(default_factory=StopGuard)

    def info(self) -> SessionInfo:
        return SessionInfo(self.session_id, self.transcript_path, self.cwd, self.mode())

    def has(self, event: HookEvent) -> bool:
        return any(h.event == event and h.applies(self.trusted) for h in self.config.hooks)

    async def run(self, event: HookEvent, **fields: Any) -> HookOutcome:
        """Run the hooks of `event` that match; an outcome that changes nothing when none do."""
        if not self.has(event):
            return HookOutcome()
        data = payload(event, self.info(), **fields)
        chosen = self.config.select(event, data, self.trusted)
        return await run_hooks(event, data, chosen, cwd=self.cwd, env=self.env)


def notices(outcome: HookOutcome) -> list[Notice]:
    """What the hooks had to tell the user (failures, timeouts, messages), one line each."""
    return [Notice(line, "warning") for line in outcome.messages]
