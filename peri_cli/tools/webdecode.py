"""WebFetch's body decoding: gzip and deflate content codings undone within the size cap;
any other coding is refused by name, so compressed bytes never reach the model as text."""

from __future__ import annotations

import zlib

_GZIP = 16 + zlib.MAX_WBITS
_ZLIB = zlib.MAX_WBITS
_RAW = -zlib.MAX_WBITS  # some servers send "deflate" without the zlib header the RFC asks for


class UndecodableBody(ValueError):
    """A content coding WebFetch cannot undo; the message names it, for the model."""


def decode_body(coding_header: str | None, body: bytes, limit: int) -> bytes:
    """`body` with its content codings (applied in the header's order) undone, keeping at most
    `limit + 1` bytes of each stage so a small bomb cannot fill memory."""
    codings = [c.strip().lower() for c in (coding_header or "").split(",") if c.strip()]
    for coding in reversed(codings):
        if coding in ("identity", ""):
            continue
        if coding in ("gzip", "x-gzip"):
            body = _inflate(body, _GZIP, limit, coding)
        elif coding == "deflate":
            try:
                body = _inflate(body, _ZLIB, limit, coding)
            except UndecodableBody:
                body = _inflate(body, _RAW, limit, coding)
        else:
            raise UndecodableBody(
                f"the server sent the body {coding}-encoded, which WebFetch cannot decode "
                "(it decodes gzip and deflate)"
            )
    return body


def _inflate(data: bytes, wbits: int, limit: int, coding: str) -> bytes:
    out = bytearray()
    try:
        while data and len(out) <= limit:
            engine = zlib.decompressobj(wbits)
            out += engine.decompress(data, limit + 1 - len(out))
            # gzip may hold several members one after another; a cut stream just ends early
            data = engine.unused_data if engine.eof and wbits == _GZIP else b""
    except zlib.error as e:
        raise UndecodableBody(f"the body is not valid {coding} data ({e})") from e
    return bytes(out)
