"""The user's recorded answers about workspaces: `$PERI_HOME/trusted-workspaces.json`, keyed by
the resolved workspace path, written atomically under a lock, never replaced when malformed."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from peri_cli.base.atomic import atomic_write
from peri_cli.base.safe_read import SafeReadError, read_text

TRUST_FILE = "trusted-workspaces.json"
TRUST_FILE_VERSION = 1
MAX_TRUST_FILE_BYTES = 4 << 20
# Declined loosenings kept per workspace: a repository with thousands of them must not grow the
# file past its cap (beyond this many, the rest may be asked about again).
MAX_DECLINED = 1000


class TrustStoreError(Exception):
    """The trust record cannot be written; one line for the user."""


@dataclass(frozen=True)
class TrustRecord:
    """The user's answer for one workspace."""

    trusted: bool
    declined: frozenset[str] = frozenset()  # identities of loosenings the user said no to
    # Project MCP servers (their entries' fingerprints) the user let start, or said no to: one
    # added to `.mcp.json` after the workspace was trusted is asked about once.
    servers: frozenset[str] = frozenset()
    refused_servers: frozenset[str] = frozenset()


class TrustStore:
    """`$PERI_HOME/trusted-workspaces.json`: `{"version": 1, "workspaces": {path: record}}`."""

    def __init__(self, peri_home: Path) -> None:
        self.path = peri_home / TRUST_FILE

    def lookup(self, workspace: Path) -> tuple[TrustRecord | None, str | None]:
        """(the answer recorded for `workspace` or None, a warning when the file is unusable)."""
        try:
            entries = self._entries()
        except TrustStoreError as e:
            return None, f"{e}; no workspace counts as trusted"
        raw = entries.get(_key(workspace))
        if raw is None:
            return None, None
        record = _parse_record(raw)
        if record is None:
            return None, f"{self.path}: the entry for {workspace} is malformed; not trusted"
        return record, None

    def record(self, workspace: Path, record: TrustRecord) -> None:
        """Store the answer for `workspace` (atomically; a malformed file is never replaced)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked():
                entries = self._entries()
                entries[_key(workspace)] = _dump_record(record)
                data = {"version": TRUST_FILE_VERSION, "workspaces": entries}
                _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False))
        except OSError as e:
            raise TrustStoreError(f"{self.path}: cannot write ({e.strerror or e})") from e

    def remember_server(self, workspace: Path, fingerprint: str, *, start: bool) -> None:
        """Add the answer about one project MCP server to the workspace's record (kept as it
        is otherwise; a workspace with no record gets an untrusted one holding the answer)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked():
                entries = self._entries()
                old = _parse_record(entries.get(_key(workspace))) or TrustRecord(False)
                allowed, refused = set(old.servers), set(old.refused_servers)
                (allowed if start else refused).add(fingerprint)
                (refused if start else allowed).discard(fingerprint)
                record = TrustRecord(
                    old.trusted, old.declined, frozenset(allowed), frozenset(refused)
                )
                entries[_key(workspace)] = _dump_record(record)
                data = {"version": TRUST_FILE_VERSION, "workspaces": entries}
                _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False))
        except OSError as e:
            raise TrustStoreError(f"{self.path}: cannot write ({e.strerror or e})") from e

    def _entries(self) -> dict[str, Any]:
        try:
            text = read_text(self.path, max_bytes=MAX_TRUST_FILE_BYTES)
        except SafeReadError as e:
            if e.missing:
                return {}
            raise TrustStoreError(str(e)) from e
        try:
            data = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError) as e:
            raise TrustStoreError(f"{self.path}: not valid JSON") from e
        workspaces = data.get("workspaces", {}) if isinstance(data, dict) else None
        if not isinstance(workspaces, dict):
            raise TrustStoreError(f"{self.path}: malformed (expected an object of workspaces)")
        return dict(workspaces)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialise read-modify-write between two `peri` processes answering at once."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        fd = os.open(self.path.with_name(TRUST_FILE + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _key(workspace: Path) -> str:
    return os.path.realpath(workspace)


def _dump_record(record: TrustRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "trusted": record.trusted,
        "declined": sorted(record.declined)[:MAX_DECLINED],
    }
    if record.servers or record.refused_servers:
        out["servers"] = sorted(record.servers)[:MAX_DECLINED]
        out["refused_servers"] = sorted(record.refused_servers)[:MAX_DECLINED]
    out["updated"] = datetime.now(UTC).isoformat(timespec="seconds")
    return out


def _parse_record(raw: Any) -> TrustRecord | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("trusted"), bool):
        return None
    lists: list[frozenset[str]] = []
    for key in ("declined", "servers", "refused_servers"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
            return None
        lists.append(frozenset(value))
    return TrustRecord(raw["trusted"], *lists)


def _write_atomically(path: Path, text: str) -> None:
    atomic_write(path, (text + "\n").encode("utf-8"))
