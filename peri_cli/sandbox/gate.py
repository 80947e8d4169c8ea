"""Which domains the sandbox's proxy lets through: the settings' allowed and denied patterns, then
the session's answers, then one question per new domain (asked once, however many connections
wait on it). No sockets here: the proxy hands in the name the client asked for."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

from peri_cli.permissions.hosts import canonical_host, matches_any

Answer = Literal["allow", "always", "deny"]
# Asks the user (the TUI's prompt, the SDK's can_use_tool("Network", ...)); None: headless, denied.
Ask = Callable[[str], Awaitable[Answer]]
# Keeps a domain answered "always" (e.g. `allowlist.add_allowed_domain` on a settings file).
Remember = Callable[[str], None]

ASK_TIMEOUT = 300.0  # a question nobody answers is a denial, not a connection held forever


class DomainGate:
    def __init__(
        self,
        allowed: Iterable[str] = (),
        denied: Iterable[str] = (),
        *,
        ask: Ask | None = None,
        remember: Remember | None = None,
        ask_timeout: float = ASK_TIMEOUT,
    ) -> None:
        self.allowed = list(allowed)  # patterns as hosts.py reads them (`*.example.com`)
        self.denied = list(denied)  # win over allowed: WebFetch(domain:…) deny rules narrow
        self._ask = ask
        self._remember = remember
        self._ask_timeout = ask_timeout
        self._answers: dict[str, bool] = {}  # this session's answers, by canonical host
        self._asking: dict[str, asyncio.Future[bool]] = {}
        self.notes: list[str] = []  # what went wrong keeping an "always", for the caller to show

    def decided(self, host: str) -> bool | None:
        """True or False when settings or an earlier answer decide `host`, None when it would
        be asked."""
        name = canonical_host(host)
        if not name or matches_any(self.denied, name):
            return False
        if matches_any(self.allowed, name):
            return True
        return self._answers.get(name)

    async def admit(self, host: str) -> bool:
        """Whether a connection to `host` (the name asked for, not yet resolved) may go."""
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

    async def _question(self, name: str) -> bool:
        if self._ask is None:
            return False
        try:
            answer = await asyncio.wait_for(self._ask(name), self._ask_timeout)
        except Exception:  # a failed or unanswered question denies
            answer = "deny"
        allowed = answer in ("allow", "always")
        self._answers[name] = allowed
        if answer == "always":
            self._keep(name)
        return allowed

    def _keep(self, name: str) -> None:
        self.allowed.append(name)
        if self._remember is None:
            return
        try:
            self._remember(name)
        except Exception as e:  # allowed for the session all the same
            self.notes.append(f"could not save {name} to the allowed domains: {e}")
