"""Background commands (`run_in_background`): each shell waited for on a thread without being
reaped, its exit code appended to its output file, and every one still running ended when Peri
exits, whichever BashTool started it."""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from peri_cli.tools.procgroups import end_groups_now
from peri_cli.tools.sidefile import SideFile

# After a background shell exits, how long its output may take to reach the side file.
DRAIN_SECONDS = 0.5


@dataclass(eq=False)
class Job:
    """A background command. Its shell is waited for without being reaped (`waitid` with
    WNOWAIT), so the shell's pid, which is the group id, cannot be reused by an unrelated process
    before the group is ended: signalling the group stays safe after the shell exits."""

    proc: subprocess.Popen[bytes]
    on_exit: Callable[[], None] = lambda: None  # e.g. the sandbox tidying up after it
    exited: threading.Event = field(default_factory=threading.Event)
    reaped: bool = False

    @property
    def pgid(self) -> int:
        return self.proc.pid

    def wait_unreaped(self) -> int | None:
        """Block until the shell exits and return its status, leaving it unreaped if possible."""
        if not hasattr(os, "waitid"):
            self.reaped = True
            return self.proc.wait()
        try:
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:  # reaped meanwhile by terminate_background
            return self.proc.returncode
        if info is None:
            return None
        if info.si_code == os.CLD_EXITED:
            return info.si_status
        return -info.si_status

    def release(self) -> None:
        """Reap the shell (once its group is ended or empty)."""
        with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
            self.proc.wait(timeout=1.0)
        self.reaped = True
        _JOBS.discard(self)


# Every background command not yet released, whichever BashTool started it (a SubAgent's, or
# one dropped with its agent), so that Peri's exit ends them all; the exit hook is registered
# by the first background command.
_JOBS: set[Job] = set()
_exit_hook_registered = False


def track(job: Job) -> None:
    global _exit_hook_registered
    _JOBS.add(job)
    if not _exit_hook_registered:
        atexit.register(_terminate_all)
        _exit_hook_registered = True


def _terminate_all(grace: float = 2.0) -> None:
    jobs = list(_JOBS)
    end_groups_now([j.pgid for j in jobs if not j.reaped], grace)
    for job in jobs:
        job.release()


def watch(job: Job, side: SideFile, copier: threading.Thread) -> None:
    """Wait for a background command's shell and record how it ended, after the output still in
    its pipe (`copier` copies it; processes the shell left may hold the pipe on)."""
    returncode = job.wait_unreaped()
    copier.join(timeout=DRAIN_SECONDS)
    side.append_note(f"\n[exit code {returncode}]\n")
    side.release()
    job.on_exit()
    job.exited.set()
