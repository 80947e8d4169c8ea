"""Time-ordered identifiers (UUIDv7, RFC 9562) for sessions, messages and entries."""

from __future__ import annotations

import os
import threading
import time
import uuid

_lock = threading.Lock()
_last = 0


def uuid7() -> str:
    """A UUIDv7 string; strictly increasing within this process, even in the same millisecond."""
    global _last
    with _lock:
        ms = time.time_ns() // 1_000_000
        rand = int.from_bytes(os.urandom(10), "big")
        # 48 bits of ms, then 74 random bits; bump to keep ids monotonic within a process.
        value = (ms << 74) | (rand & ((1 << 74) - 1))
        if value <= _last:
            value = _last + 1
        _last = value
    ms_part = value >> 74
    rand_a = (value >> 62) & 0xFFF
    rand_b = value & ((1 << 62) - 1)
    n = (ms_part << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=n))
