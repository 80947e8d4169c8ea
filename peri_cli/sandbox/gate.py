"""Which domains the sandbox's proxy lets through: the settings' allowed and denied patterns, then
the session's answers, then one question per new domain (asked once, however many connections
wait on it). No sockets here: the proxy hands in the name the client asked for."""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from peri_cli.permissions.hosts import canonical_host, is_host_name, matches_any

# Where "always" keeps a domain: the settings layers of CONTRACT.md §3 (local: the workspace's
# personal `.peri/settings.local.json`, project: its shared `.peri/settings.json`, user:
# PERI_HOME's).
Scope = Literal["local", "project", "user"]


@dataclass(frozen=True)
class Always:
    """Allowed, and kept in the settings of `scope` (bare "always" keeps it in "local")."""

    scope: Scope = "local"


Answer = Literal["allow", "always", "deny"] | Always
# Asks the user (the TUI's prompt, the SDK's can_use_tool("Network", ...)); None: headless, denied.
Ask = Callable[[str], Awaitable[Answer]]
# Keeps a domain answered "always" in the settings of a scope (`allowlist.keep_domain`).
Remember = Callable[[str, Scope], None]

ASK_TIMEOUT = 300.0  # a question nobody answers is a denial, not a connection held forever
MAX_REFUSALS = 200  # refusals kept for the commands' results: the latest ones are what matter


@dataclass(frozen=True)
class Refusal:
    seq: int
    host: str  # canonical, or a short printable stand-in for a name that is not a host
    why: str


class DomainGate:
    def __init__(
        self,
        allowed: Iterable[str] = (),
        denied: Iterable[str] = (),
        *,
        ask: Ask | None = None,
        remember: Remember | None = None,
        on_note: Callable[[str], None] | None = None,
        ask_timeout: float = ASK_TIMEOUT,
    ) -> None:
        self.allowed = list(allowed)  # patterns as hosts.py reads them (`*.example.com`)
        self.denied = list(denied)  # win over allowed: WebFetch(domain:…) deny rules narrow
        self._ask = ask
        self._remember = remember
        self._on_note = on_note
        self._ask_timeout = ask_timeout
        self._answers: dict[str, bool] = {}  # this session's answers, by canonical host
        self._asking: dict[str, asyncio.Future[bool]] = {}
        self.notes: list[str] = []  # what went wrong keeping an "always", for the caller to show
        self._seq = itertools.count(1)
        self.refusals: deque[Refusal] = deque(maxlen=MAX_REFUSALS)

    def set_lists(self, allowed: Iterable[str], denied: Iterable[str]) -> None:
        """The settings' lists again (they changed mid-session); the session's answers stay."""
        kept = [name for name, yes in self._answers.items() if yes]
        self.allowed = list(dict.fromkeys([*allowed, *kept]))
        self.denied = list(denied)

    def mark(self) -> int:
        """A point in the refusals: `refused_since(mark)` lists what was refused after it."""
        return self.refusals[-1].seq if self.refusals else 0

    def refused_since(self, mark: int) -> list[Refusal]:
        seen: dict[str, Refusal] = {}
        for refusal in self.refusals:
            if refusal.seq > mark:
                seen.setdefault(refusal.host, refusal)
        return list(seen.values())

    def decided(self, host: str) -> bool | None:
        """True or False when settings or an earlier answer decide `host`, None when it would
        be asked."""
        name = canonical_host(host)
        if not is_host_name(name) or matches_any(self.denied, name):
            return False
        if matches_any(self.allowed, name):
            return True
        return self._answers.get(name)

    async def admit(self, host: str) -> bool:
        """Whether a connection to `host` (the name asked for, not yet resolved) may go."""
        allowed = await self._admit(host)
        if not allowed:
            self._refused(host)
        return allowed

    async def _admit(self, host: str) -> bool:
        known = self.decided(host)
        if known is not None:
            return known
        name = canonical_host(host)
        pending = self._asking.get(name)
        if pending is None:  # the first connection asks; the others wait for its answer
            pending = asyncio.get_running_loop().create_future()
            self._asking[name] = pending
            try:
                pending.set_result(await self._question(name))
            finally:
                del self._asking[name]
                if not pending.done():  # cancelled while asking: the waiters are denied
                    pending.set_result(False)
        return await asyncio.shield(pending)

    def _refused(self, host: str) -> None:
        name = canonical_host(host)
        if not is_host_name(name):
            shown = "".join(c for c in host[:60] if c.isprintable()) or "?"
            why = "not a host name"
            name = shown
        elif matches_any(self.denied, name):
            why = "denied by the settings or a WebFetch deny rule"
        elif self._ask is None:
            why = "not in sandbox.network.allowedDomains, and no one can be asked here"
        else:
            why = "not allowed by the user"
        self.refusals.append(Refusal(next(self._seq), name, why))

    async def _question(self, name: str) -> bool:
        if self._ask is None:
            return False
        try:
            answer = await asyncio.wait_for(self._ask(name), self._ask_timeout)
        except Exception:  # a failed or unanswered question denies
            answer = "deny"
        if answer == "always":
            answer = Always()
        allowed = answer == "allow" or isinstance(answer, Always)
        self._answers[name] = allowed
        if isinstance(answer, Always):
            self._keep(name, answer.scope)
        return allowed

    def _keep(self, name: str, scope: Scope) -> None:
        self.allowed.append(name)
        if self._remember is None:
            return
        try:
            self._remember(name, scope)
        except Exception as e:  # allowed for the session all the same
            self._note(f"could not save {name} to the allowed domains: {e}")

    def _note(self, text: str) -> None:
        self.notes.append(text)
        if self._on_note is not None:
            self._on_note(text)
