"""The `CommandSandbox` the runtime hands to the tools: bubblewrap around each command line,
with the mount points it had to create for missing guarded paths removed again once no
sandboxed command is running."""

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
from peri_cli.sandbox import bwrap


class BwrapSandbox:
    """Runs command lines under `policy` with bubblewrap."""

    def __init__(
        self,
        policy: SandboxPolicy,
        excluded: Callable[[str], bool],
        *,
        before: Callable[[], None] = lambda: None,
    ) -> None:
        self.policy = policy
        self._excluded = excluded
        self._before = before  # as a command starts, on its event loop (the proxy serves)
        self._lock = threading.Lock()
        self._running = 0
        self._created: set[Path] = set()
        # Outside every writable root (/tmp is a fresh tmpfs inside), so nothing can fill it.
        self._empty = Path(tempfile.mkdtemp(prefix="peri-sandbox-empty-"))

    def covers(self, command: str) -> bool:
        return not self._excluded(command)

    def wrap(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> SandboxedCommand:
        plan = bwrap.build(self.policy, argv, dict(env), cwd, empty_dir=self._empty)
        self._before()
        with self._lock:
            self._running += 1
            self._created.update(plan.created)
        done = threading.Event()

        def finish() -> None:
            if not done.is_set():
                done.set()
                self._finished()

        return SandboxedCommand(plan.argv, plan.env, finish)

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
