"""The `CommandSandbox` the runtime hands to the tools: bubblewrap (Linux) or Seatbelt (macOS)
around each command line, with the protected paths known as it starts bound read-only, the mount
points bubblewrap had to create for missing guarded folders removed again once no sandboxed
command is running, the protected-path check run as each one starts and ends (`guard.py`), and
what the domain proxy refused and the check found while a command ran told in its result."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from peri_cli.base.tool import SandboxedCommand
from peri_cli.permissions.sandbox_denials import explain
from peri_cli.permissions.sandbox_policy import SandboxPolicy
from peri_cli.sandbox import bwrap, seatbelt
from peri_cli.sandbox.gate import DomainGate
from peri_cli.sandbox.guard import ProtectedGuard

MAX_NETWORK_NOTES = 5


class BwrapSandbox:
    """Runs command lines under `policy` with bubblewrap. `policy` may be replaced between
    commands (the settings changed): each command is built from the one in force as it starts."""

    def __init__(
        self,
        policy: SandboxPolicy,
        excluded: Callable[[str], bool],
        *,
        before: Callable[[], None] = lambda: None,
        gate: DomainGate | None = None,
        refused: Callable[[], Path | None] = lambda: None,
        on_report: Callable[[list[str]], None] = lambda lines: None,
    ) -> None:
        """`refused`: where the session keeps what the protected-path check moves aside (None:
        nowhere, it stays); `on_report`: the user's copy of what the check found."""
        self.policy = policy
        self._excluded = excluded
        # As a command starts, on its event loop, before its command line is built: the proxy
        # starts serving, and settings edited since the last command are read again.
        self._before = before
        self._gate = gate  # the domain proxy's, whose refusals a command's result names
        self._lock = threading.Lock()
        self._running = 0
        self._created: set[Path] = set()
        # Outside every writable root (/tmp is a fresh tmpfs inside), so nothing can fill it.
        self._empty = Path(tempfile.mkdtemp(prefix="peri-sandbox-empty-"))
        self.guard = ProtectedGuard(
            policy.workspace, refused, on_report=on_report, stubs=self._stubs
        )

    def covers(self, command: str) -> bool:
        return not self._excluded(command)

    def wrap(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> SandboxedCommand:
        self._before()
        guard = self.guard
        seq = guard.started()
        with self._lock:
            policy = self.current_policy()
            plan = self._plan(policy, argv, dict(env), cwd)
            self._running += 1
            self._created.update(plan.created)
        done = threading.Event()
        gate, mark = self._gate, self._gate.mark() if self._gate is not None else 0

        def finish() -> None:
            if not done.is_set():
                done.set()
                self._finished()
                guard.ended(seq)

        def notes() -> str | None:
            found = [None if gate is None else network_note(gate, mark), guard.take_notes()]
            return "\n".join(n for n in found if n) or None

        return SandboxedCommand(plan.argv, plan.env, finish, notes)

    def _plan(
        self, policy: SandboxPolicy, argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> bwrap.Plan:
        return bwrap.build(policy, argv, env, cwd, empty_dir=self._empty)

    def _stubs(self) -> set[Path]:
        with self._lock:
            return set(self._created)

    def explain(self, output: str, cwd: Path) -> str | None:
        return explain(self.current_policy(), output, cwd)

    def current_policy(self) -> SandboxPolicy:
        """The policy with the protected paths known now, as the next command gets it."""
        return self.policy.with_protected(self.guard.protected())

    def _finished(self) -> None:
        with self._lock:
            self._running -= 1
            if self._running > 0:
                return
            created, self._created = self._created, set()
        # Deepest first, and only while still empty: what a user made there meanwhile stays.
        for path in sorted(created, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                elif path.is_file() and path.stat().st_size == 0:
                    path.unlink()

    def close(self) -> None:
        self.guard.close()
        shutil.rmtree(self._empty, ignore_errors=True)


class SeatbeltSandbox(BwrapSandbox):
    """macOS: the same policy as a Seatbelt profile, `sandbox-exec -p PROFILE` before the
    command. Seatbelt denies a write to a path that does not exist yet by its rule, so no mount
    points are made. No network namespace either: the relay's fixed port could be taken by
    another command, so until the proxy gets a port of its own here, commands have no network
    (the runtime builds the policy without a proxy)."""

    def _plan(
        self, policy: SandboxPolicy, argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> bwrap.Plan:
        argv_out = seatbelt.command_line(policy, list(argv))
        return bwrap.Plan(argv_out, {**env, **policy.env_extra})


def network_note(gate: DomainGate, mark: int) -> str | None:
    """The connections the proxy refused since `mark`, for the model (None: none). Commands run
    side by side share the proxy, so a refusal is named by when it happened, not by whose."""
    refused = gate.refused_since(mark)
    if not refused:
        return None
    lines = [
        f"network access to {r.host} refused by the sandbox ({r.why})"
        for r in refused[:MAX_NETWORK_NOTES]
    ]
    if len(refused) > MAX_NETWORK_NOTES:
        lines.append(f"... and {len(refused) - MAX_NETWORK_NOTES} more domains")
    lines.append(
        "Commands reach the network only through the sandbox's proxy, domain by domain; "
        "ask the user to allow a domain that is needed."
    )
    return "\n".join(lines)
