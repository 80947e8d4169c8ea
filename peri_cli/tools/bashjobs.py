"""Background commands (`run_in_background`): each started through the reaper, its status read
on a thread (the exit code appended to its output file), and every one still running ended, with
all it started, when Peri exits, whichever BashTool started it."""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from peri_cli.tools.reaping import Command
from peri_cli.tools.sidefile import SideFile

# After a background shell exits, how long its output may take to reach the side file.
DRAIN_SECONDS = 0.5
# After the grace, how long SIGKILLed processes may take to be gone and their keeper to say so.
_KILL_WAIT_SECONDS = 2.0


@dataclass(eq=False)
class Job:
    """A background command: its shell's pid (also its process group id) and its keeper."""

    command: Command
    pid: int
    on_exit: Callable[[], None] = lambda: None  # e.g. the sandbox tidying up after it
    exited: threading.Event = field(default_factory=threading.Event)  # its shell
    ended: threading.Event = field(default_factory=threading.Event)  # and all it started


# Every background command not yet ended, whichever BashTool started it (a SubAgent's, or one
# dropped with its agent), so that Peri's exit ends them all; the exit hook is registered by the
# first background command. (Were Peri killed, its keepers would end them on their own.)
_JOBS: set[Job] = set()
_exit_hook_registered = False


def track(job: Job) -> None:
    global _exit_hook_registered
    _JOBS.add(job)
    if not _exit_hook_registered:
        atexit.register(_terminate_all)
        _exit_hook_registered = True


def _terminate_all(grace: float = 2.0) -> None:
    end_jobs(list(_JOBS), grace)


def end_jobs(jobs: Iterable[Job], grace: float) -> None:
    """Stop each job (SIGTERM to all it started, SIGKILL after `grace`) and wait until its
    keeper says all are gone."""
    running = [j for j in jobs if not j.ended.is_set()]
    for job in running:
        job.command.stop()
    deadline = time.monotonic() + grace + _KILL_WAIT_SECONDS
    for job in running:
        job.ended.wait(max(0.0, deadline - time.monotonic()))


def watch(job: Job, side: SideFile, copier: threading.Thread) -> None:
    """Follow a background command's status: record how its shell ended (after the output still
    in its pipe, which `copier` copies; processes the shell left may hold the pipe on), then that
    all it started has ended."""
    said = job.command.read_until("exited")
    copier.join(timeout=DRAIN_SECONDS)
    if said.code is not None:
        side.append_note(f"\n[exit code {said.code}]\n")
    side.release()
    job.on_exit()
    job.exited.set()
    job.command.read_until("ended")
    job.command.close()
    _JOBS.discard(job)
    job.ended.set()
