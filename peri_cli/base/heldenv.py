"""The provider variables, held in Peri's memory only, out of the environment block `/proc` shows.

`child_env` keeps the keys out of a child's own environment, but a child can still read its
parent's: `cat /proc/$PPID/environ` prints the environment Peri was started with, exactly as the
kernel laid it out on Peri's stack at exec. `PR_SET_DUMPABLE=0` makes that file unreadable for
processes of the same user without `CAP_SYS_PTRACE`, but root (as in CI containers) still reads it.
So at start Peri (`hide_provider_env`, called first thing by `cli.main`):

1. moves every `ANTHROPIC_*`/`OPENAI_*` variable from `os.environ` (and libc's `environ`) into a
   mapping in memory (`held_env`), which the runtime adds to its env: providers take their key
   and base URL from it, children never see it (`child_env`), nor does a child spawned without an
   explicit environment;
2. overwrites those entries with NUL bytes in the block the kernel reads for `/proc/<pid>/environ`
   (found through `/proc/self/stat`, written through `/proc/self/mem`, only after checking that
   the bytes there are exactly what `/proc/self/environ` shows);
3. marks itself non-dumpable (Linux), so that processes of the same user cannot open
   `/proc/<pid>/mem` or attach a debugger to read the key from Peri's heap.

Chosen over re-executing with the keys on a pipe: no second interpreter start, and the process
keeps its id, argv, descriptors and signal state without any reconstruction, whether it was
started as the console script, `python -m peri_cli` or anything else.

What stays readable: the environment of the process that started Peri (the shell that exported
the key), and anything root with `CAP_SYS_PTRACE` chooses to read from Peri's memory. A program that
uses `peri_cli.sdk` in its own process is not touched: nothing here runs unless `cli.main` does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from peri_cli.base.childenv import is_credential

_held: dict[str, str] = {}

PR_SET_DUMPABLE = 4


def held_env() -> Mapping[str, str]:
    """The provider variables taken out of the environment at start (empty in an SDK host)."""
    return dict(_held)


def hide_provider_env() -> None:
    """Hold the provider variables in memory, wipe them from `/proc`, become non-dumpable."""
    names = [name for name in os.environ if is_credential(name)]
    for name in names:
        # pop unsets libc's copy too, so even a child started without `env=` inherits nothing
        _held[name] = os.environ.pop(name)
    if names and sys.platform.startswith("linux"):
        wipe_proc_environ(set(names))
    set_non_dumpable()


def wipe_proc_environ(names: set[str]) -> bool:
    """Overwrite the entries named `names` with NULs in this process's initial environment block.
    False (nothing written) where the block cannot be found or does not read back as expected."""
    try:
        start, end = _environ_bounds()
        with open("/proc/self/environ", "rb") as f:
            shown = f.read()
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            if end <= start or mem.read(end - start) != shown:
                return False  # not the block the kernel shows: write nothing
            wiped = _wiped(shown, {os.fsencode(n) for n in names})
            if wiped != shown:
                mem.seek(start)
                mem.write(wiped)
    except (OSError, ValueError, IndexError, OverflowError):
        return False
    return True


def _environ_bounds() -> tuple[int, int]:
    """`env_start` and `env_end` (fields 50 and 51 of proc(5)'s /proc/pid/stat, Linux 3.5+)."""
    with open("/proc/self/stat", "rb") as f:
        stat = f.read()
    # the command name (field 2) may hold spaces and parentheses: count from its last `)`
    fields = stat[stat.rindex(b")") + 2 :].split()
    return int(fields[50 - 3]), int(fields[51 - 3])


def _wiped(block: bytes, names: set[bytes]) -> bytes:
    """`block` with every `NAME=value` entry whose name is in `names` turned into NULs, the
    other entries where they were (libc's `environ` still points at them)."""
    out = bytearray(block)
    pos = 0
    for entry in block.split(b"\0"):
        if entry.split(b"=", 1)[0] in names:
            out[pos : pos + len(entry)] = bytes(len(entry))
        pos += len(entry) + 1
    return bytes(out)


def set_non_dumpable() -> bool:
    """`prctl(PR_SET_DUMPABLE, 0)`: no `/proc/<pid>/mem`, `environ` or ptrace for processes of
    the same user that lack `CAP_SYS_PTRACE`. Linux only; False elsewhere or on failure."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
