"""One host matcher for WebFetch(domain:…) rules and the sandbox's domain proxy.

Hosts are compared in one canonical form, because resolvers accept many spellings of one address:
`2130706433`, `0x7f000001`, `127.1` and `0177.0.0.1` all reach 127.0.0.1 (inet_aton's forms, which
glibc's getaddrinfo and browsers accept), and so does `[::ffff:127.0.0.1]`. Names are lower-cased,
IDNA-encoded (so full-width digits and dots fold too) and lose their trailing dot.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

_MAX_HOST = 253  # a DNS name's limit; a longer "host" is only compared as text
# The deprecated IPv4-compatible IPv6 form (::a.b.c.d) still routes to the IPv4 address on some
# stacks; :: and ::1 are not of that form.
_COMPAT_FLOOR = 1 << 16


def canonical_host(host: str) -> str:
    """`host` in the form rules are compared in: an IP address as `ipaddress` prints it (an
    IPv4-mapped or -compatible IPv6 address as its IPv4), a name lower-case and IDNA-encoded."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        return _ipv6(text) or text.lower()
    name = _idna(text.lower()).rstrip(".")
    address = _ipv4(name)
    return str(address) if address is not None else name


_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")


def is_host_name(name: str) -> bool:
    """Whether `name` (canonical, as `canonical_host` gives it) is one host a connection can
    name: an IP address, or a DNS name of letters, digits, `-` and `_` in labels of at most 63
    and 253 in all. What a command hands the proxy is untrusted: anything else (control
    characters, spaces, a glob, megabytes) is refused before a person is asked about it."""
    if not name or len(name) > _MAX_HOST:
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return all(_LABEL.fullmatch(label) for label in name.split("."))
    return True


def host_matches(pattern: str, host: str) -> bool:
    """Whether `host` is what `pattern` names: one host in any spelling, or with `*` a glob over
    the canonical name (`*.example.com` is every subdomain of example.com, not itself)."""
    if "*" not in pattern:
        return canonical_host(pattern) == canonical_host(host)
    regex = ".*".join(re.escape(piece) for piece in _glob(pattern))
    return re.fullmatch(regex, canonical_host(host)) is not None


def matches_any(patterns: Iterable[str], host: str) -> bool:
    return any(host_matches(p, host) for p in patterns)


def is_loopback(host: str) -> bool:
    """A loopback address in any spelling, or `localhost` (which resolvers keep on the machine)."""
    name = canonical_host(host)
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _glob(pattern: str) -> list[str]:
    # Pieces between the stars, each folded like a host; the dots next to a star stay as written.
    pieces = []
    for piece in pattern.strip().split("*"):
        lead = "." if piece.startswith(".") else ""
        core = piece.strip(".")
        tail = "." if piece.endswith(".") and core else ""
        pieces.append(lead + (_idna(core.lower()) if core else "") + tail)
    return pieces


def _idna(name: str) -> str:
    if name.isascii() or len(name) > _MAX_HOST:
        return name
    try:
        return name.encode("idna").decode("ascii").lower()
    except UnicodeError:  # not a valid IDNA name: it can only be compared as written
        return name


def _ipv6(text: str) -> str | None:
    try:
        address = ipaddress.IPv6Address(text.split("%", 1)[0])  # the zone does not change the host
    except ValueError:
        return None
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    if _COMPAT_FLOOR <= int(address) < 1 << 32:
        return str(ipaddress.IPv4Address(int(address)))
    return str(address)


def _ipv4(name: str) -> ipaddress.IPv4Address | None:
    """`name` read as inet_aton reads it (1 to 4 parts, each decimal, 0x-hex or 0-octal; the last
    fills the remaining bytes), or None when it is not an address in that syntax."""
    parts = name.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = [_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    *head, last = values
    if any(n > 255 for n in head) or last >= 1 << (8 * (5 - len(values))):
        return None
    value = last
    for i, n in enumerate(head):
        value |= n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


_DIGITS = {16: re.compile(r"[0-9a-fA-F]+"), 8: re.compile(r"[0-7]+"), 10: re.compile(r"[0-9]+")}


def _number(part: str) -> int | None:
    if part[:2] in ("0x", "0X"):
        digits, base = part[2:] or "0", 16  # inet_aton reads a bare 0x as zero
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if len(digits) > 32 or not _DIGITS[base].fullmatch(digits):
        return None
    return int(digits, base)
