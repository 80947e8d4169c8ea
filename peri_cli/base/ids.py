"""Identifiers: random session ids (UUIDv4) and time-ordered entry ids (UUIDv7, RFC 9562).

Session ids are random so that their first 8 characters tell sessions apart even when they were
started in the same second (a UUIDv7's first 8 characters are its timestamp)."""

from __future__ import annotations

import os
import re
import threading
import time
import uuid

_lock = threading.Lock()
_last = 0


SESSION_ID = re.compile(r"[0-9a-fA-F][0-9a-fA-F-]{0,35}")


def session_id() -> str:
    return str(uuid.uuid4())


def is_session_id(text: str) -> bool:
    """Text shaped like a session id or a prefix of one: hex digits and dashes, at most 36."""
    return SESSION_ID.fullmatch(text) is not None


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
