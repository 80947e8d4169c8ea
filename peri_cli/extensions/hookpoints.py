"""Where the agent loop calls the user's command hooks (configured in hooks.py, sent
hookpayloads.py, run by hookrun.py, answers read by hookanswers.py): one small object per
session that knows the session, the workspace's trust and the hook settings. Async hooks are
started here and left to `hookbackground`; the others are awaited."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peri_cli.base.events import Notice
from peri_cli.extensions.hookanswers import HookOutcome, StopGuard
from peri_cli.extensions.hookbackground import BackgroundHooks
from peri_cli.extensions.hookpayloads import SessionInfo, encode_payload, payload
from peri_cli.extensions.hookrun import run_hooks
from peri_cli.extensions.hooks import HookConfig, HookEvent, JudgedCall


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
    background: BackgroundHooks = field(default_factory=BackgroundHooks)

    def info(self) -> SessionInfo:
        return SessionInfo(self.session_id, self.transcript_path, self.cwd, self.mode())

    def has(self, event: HookEvent) -> bool:
        return any(h.event == event and h.applies(self.trusted) for h in self.config.hooks)

    async def run(
        self, event: HookEvent, *, judged: JudgedCall | None = None, **fields: Any
    ) -> HookOutcome:
        """Run the hooks of `event` that match (`judged`: the tool call as the rules see it,
        for `if` conditions); an outcome that changes nothing when none do. Async hooks are
        started and not waited for."""
        if event == "UserPromptSubmit":
            self.background.user_spoke()
        if not self.has(event):
            return self._with_notes(HookOutcome())
        data = payload(event, self.info(), **fields)
        chosen = self.config.select(event, data, self.trusted, judged)
        waited = [h for h in chosen if not h.background]
        if len(waited) < len(chosen):
            stdin = encode_payload(data)
            for hook in chosen:
                if hook.background:
                    self.background.start(event, hook, stdin, cwd=self.cwd, env=self.env)
        return self._with_notes(await run_hooks(event, data, waited, cwd=self.cwd, env=self.env))

    def waiting_notices(self) -> list[Notice]:
        """What background hooks that ended have to tell the user, not yet told."""
        return [Notice(line, "warning") for line in self.background.take_notes()]

    def _with_notes(self, outcome: HookOutcome) -> HookOutcome:
        """Background hooks' lines for the user go out with the next hook point's."""
        notes = self.background.take_notes()
        if not notes:
            return outcome
        return dataclasses.replace(outcome, messages=(*notes, *outcome.messages))


def notices(outcome: HookOutcome) -> list[Notice]:
    """What the hooks had to tell the user (failures, timeouts, messages), one line each."""
    return [Notice(line, "warning") for line in outcome.messages]
