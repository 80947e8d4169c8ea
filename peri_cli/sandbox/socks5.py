"""The SOCKS5 side of the proxy (RFC 1928): no authentication, CONNECT only. Reads the request
and answers refusals; the proxy judges the host and answers success."""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass

VERSION = 5
NO_AUTH, NO_ACCEPTABLE = 0, 0xFF
CONNECT = 1
IPV4, DOMAIN, IPV6 = 1, 3, 4
SUCCEEDED, FAILURE, NOT_ALLOWED, HOST_UNREACHABLE = 0, 1, 2, 4
COMMAND_NOT_SUPPORTED, ADDRESS_NOT_SUPPORTED = 7, 8


@dataclass(frozen=True)
class Target:
    host: str
    port: int


class Refused(Exception):
    """The request was answered with an error (or cannot be); the connection is to be closed."""


async def read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Target:
    """The target of a SOCKS5 CONNECT, the version byte already read; Refused otherwise."""
    (count,) = await reader.readexactly(1)
    methods = await reader.readexactly(count)
    if NO_AUTH not in methods:
        writer.write(bytes([VERSION, NO_ACCEPTABLE]))
        raise Refused("the client offers no method without authentication")
    writer.write(bytes([VERSION, NO_AUTH]))
    version, command, _, kind = await reader.readexactly(4)
    if version != VERSION:
        raise Refused("not SOCKS5")
    host = await _address(reader, writer, kind)
    port = int.from_bytes(await reader.readexactly(2), "big")
    if command != CONNECT:
        reply(writer, COMMAND_NOT_SUPPORTED)
        raise Refused("only CONNECT is supported")
    if port == 0:
        reply(writer, HOST_UNREACHABLE)
        raise Refused("port 0")
    return Target(host, port)


async def _address(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, kind: int) -> str:
    if kind == IPV4:
        return str(ipaddress.IPv4Address(await reader.readexactly(4)))
    if kind == IPV6:
        return str(ipaddress.IPv6Address(await reader.readexactly(16)))
    if kind == DOMAIN:
        (size,) = await reader.readexactly(1)
        raw = await reader.readexactly(size)
        try:
            name = raw.decode("ascii")
        except UnicodeDecodeError:
            name = ""
        if name.isprintable() and name:
            return name
    reply(writer, ADDRESS_NOT_SUPPORTED)
    raise Refused("an address the proxy cannot read")


def reply(writer: asyncio.StreamWriter, code: int) -> None:
    """A reply with an empty bound address: clients do not use it for CONNECT."""
    writer.write(bytes([VERSION, code, 0, IPV4, 0, 0, 0, 0, 0, 0]))
