"""A stream worker started first thing, so that a face's first request does not wait for Peri.

`peri -p` has one request to make, and `import anthropic` alone (~2 s here) is most of the time
to its answer. A thread cannot overlap that import with Peri's own start: both are Python and
share the GIL. A process can, on another core: `start` launches the worker (`worker`) before
Peri imports anything heavy, the worker imports its SDK meanwhile, and the run's provider
(`procstream.stream_provider`) takes the waiting process instead of importing the SDK here.

Only the standard library is imported here: this runs before the rest of Peri loads.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from typing import IO

_waiting: dict[str, tuple[subprocess.Popen[bytes], IO[bytes]]] = {}
_faces: set[str] = set()  # the providers this process started a worker for (`used_workers`)


def start(provider: str) -> subprocess.Popen[bytes] | None:
    """Launch a worker that loads `provider`'s SDK now (once per process: the waiting one if it
    is running); None if no process could be started."""
    if provider in _waiting:
        return _waiting[provider][0]
    _faces.add(provider)
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - the worker's stderr, for its life
    try:
        proc = subprocess.Popen(
            # -P: not the workspace's modules first on its path (it is handed the API key);
            # this process's id: the worker ends with it (`worker.die_with_parent`)
            [sys.executable, "-P", "-m", "peri_cli.providers.worker", provider, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            start_new_session=True,  # Ctrl+C is the run's to handle (it cancels the stream)
        )
    except OSError:  # no process to be had: the run imports its SDK itself
        errors.close()
        return None
    _waiting[provider] = (proc, errors)
    return proc


def used_workers(provider: str) -> bool:
    """Whether this process's face streams `provider` through workers (it started one first):
    a later session (ACP's next, `mcp serve`'s second call) gets a worker of its own rather than
    importing the SDK on the event loop every session shares."""
    return provider in _faces


def take(provider: str) -> tuple[subprocess.Popen[bytes], IO[bytes]] | None:
    """The waiting worker for `provider` and its stderr file (now the caller's to end), or None;
    a worker waiting for another provider (a guess the settings overruled) is ended."""
    found = _waiting.pop(provider, None)
    discard()
    return found


def discard(*, done: bool = False) -> None:
    """End the workers nobody took (a run that failed before its first request). `done`: the
    face's run is over, and providers built later in this process import their SDK here."""
    if done:
        _faces.clear()
    while _waiting:
        _, (proc, errors) = _waiting.popitem()
        end(proc, errors)


def end(proc: subprocess.Popen[bytes], errors: IO[bytes] | None) -> None:
    """Kill a worker and close what this side holds of it: its input and its stderr file (its
    output belongs to whoever reads it, and closes with that)."""
    with contextlib.suppress(OSError):
        proc.kill()
    proc.wait()
    for pipe in (proc.stdin, errors):
        if pipe is not None:
            with contextlib.suppress(OSError):  # unflushed bytes to a dead worker
                pipe.close()
