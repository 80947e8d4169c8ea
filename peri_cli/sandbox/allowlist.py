"""Adding a domain to `sandbox.network.allowedDomains` in a settings file (the proxy's "always").

As rulefile.py adds rules: the user's other keys stay, the file is replaced atomically under a
lock on its folder, and a file that is not a JSON object (or not a regular file) is left alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from peri_cli.base.atomic import atomic_write
from peri_cli.permissions.rulefile import LOCAL_SETTINGS_FILE, ensure_git_ignored

MAX_BYTES = 1 << 20


class AllowlistError(Exception):
    """The domain could not be saved; one line for the user, the file left as it was."""


def add_allowed_domain(settings: Path, domain: str) -> None:
    """Append `domain` to `sandbox.network.allowedDomains` of `settings`, creating the file
    (and its folder); a domain already listed is not added twice."""
    folder = settings.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AllowlistError(f"{folder}: cannot create ({e.strerror or e})") from e
    with _locked(folder):
        data = _read_object(settings)
        listed = _domains(data, settings)
        if domain not in listed:
            listed.append(domain)
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        try:
            atomic_write(settings, text.encode("utf-8"))
        except OSError as e:
            raise AllowlistError(f"{settings}: cannot write ({e.strerror or e})") from e
    if settings.name == LOCAL_SETTINGS_FILE:
        ensure_git_ignored(folder)  # the personal file stays out of the repository


def _domains(data: dict[str, Any], path: Path) -> list[Any]:
    node: Any = data
    for key in ("sandbox", "network"):
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise AllowlistError(f"{path}: {key} is not an object; not changed")
    listed = node.setdefault("allowedDomains", [])
    if not isinstance(listed, list):
        raise AllowlistError(f"{path}: sandbox.network.allowedDomains is not a list; not changed")
    return listed


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _read_object(path: Path) -> dict[str, Any]:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise AllowlistError(f"{path}: cannot read ({e.strerror or e})") from e
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
        raise AllowlistError(f"{path}: not a regular file under {MAX_BYTES} bytes; not changed")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            text = f.read(MAX_BYTES + 1).decode("utf-8")
        data = json.loads(text) if text.strip() else {}
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise AllowlistError(f"{path}: cannot read it as JSON ({e}); not changed") from e
    if not isinstance(data, dict):
        raise AllowlistError(f"{path}: not a JSON object; not changed")
    return data
