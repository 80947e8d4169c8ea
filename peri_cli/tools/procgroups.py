"""The process group a command runs in (its shell leads a new session): whether a live process
is left in it, and ending it: SIGTERM, a grace period, then SIGKILL for what is left."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time

# How often to look whether a signalled process group is gone.
POLL_SECONDS = 0.02
# How long to wait for SIGKILLed processes to be gone.
KILL_WAIT_SECONDS = 1.0


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """Whether a live process (not a zombie) is still in the process group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # kill() counts zombies too (orphans a non-reaping init never collects); Linux says more.
    try:
        entries = os.scandir("/proc")
    except OSError:
        return True
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
                return True
    return False


def end_groups_now(pgids: list[int], grace: float) -> None:
    """SIGTERM each group, wait up to `grace` seconds for them to go, SIGKILL what is left."""
    live = [g for g in pgids if group_alive(g)]
    try:
        for pgid in live:
            signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(group_alive(g) for g in live) and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
    finally:
        for pgid in live:
            if group_alive(pgid):
                signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + KILL_WAIT_SECONDS  # SIGKILL is delivered, not instant
    while any(group_alive(g) for g in live) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)


async def end_group(pgid: int, grace: float) -> bool:
    """SIGTERM the group, give it `grace` seconds to exit, then SIGKILL what is left, without
    blocking the loop. False when nothing in it was alive."""
    if not group_alive(pgid):
        return False
    loop = asyncio.get_running_loop()
    try:
        signal_group(pgid, signal.SIGTERM)
        deadline = loop.time() + grace
        while group_alive(pgid) and loop.time() < deadline:
            await asyncio.sleep(POLL_SECONDS)
    finally:
        if group_alive(pgid):
            signal_group(pgid, signal.SIGKILL)
    deadline = loop.time() + KILL_WAIT_SECONDS  # SIGKILL is delivered, not instant
    while group_alive(pgid) and loop.time() < deadline:
        await asyncio.sleep(POLL_SECONDS)
    return True
