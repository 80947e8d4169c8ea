"""The `CommandSandbox` the runtime hands to the tools: bubblewrap (Linux) or Seatbelt (macOS)
around each command line, with the mount points bubblewrap had to create for missing guarded
paths removed again once no sandboxed command is running, and what the domain proxy refused while
a command ran told in its result."""

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
    ) -> None:
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

    def covers(self, command: str) -> bool:
        return not self._excluded(command)

    def wrap(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> SandboxedCommand:
        self._before()
        plan = self._plan(argv, dict(env), cwd)
        with self._lock:
            self._running += 1
            self._created.update(plan.created)
        done = threading.Event()
        gate, mark = self._gate, self._gate.mark() if self._gate is not None else 0

        def finish() -> None:
            if not done.is_set():
                done.set()
                self._finished()

        def network() -> str | None:
            return None if gate is None else network_note(gate, mark)

        return SandboxedCommand(plan.argv, plan.env, finish, network)

    def _plan(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> bwrap.Plan:
        return bwrap.build(self.policy, argv, env, cwd, empty_dir=self._empty)

    def explain(self, output: str, cwd: Path) -> str | None:
        return explain(self.policy, output, cwd)

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
        shutil.rmtree(self._empty, ignore_errors=True)


class SeatbeltSandbox(BwrapSandbox):
    """macOS: the same policy as a Seatbelt profile, `sandbox-exec -p PROFILE` before the
    command. Seatbelt denies a write to a path that does not exist yet by its rule, so no mount
    points are made. No network namespace either: the relay's fixed port could be taken by
    another command, so until the proxy gets a port of its own here, commands have no network
    (the runtime builds the policy without a proxy)."""

    def _plan(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> bwrap.Plan:
        argv_out = seatbelt.command_line(self.policy, list(argv))
        return bwrap.Plan(argv_out, {**env, **self.policy.env_extra})


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
