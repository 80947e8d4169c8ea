"""Grep's search without ripgrep, run as a child process that Grep can stop at any moment.

Python's `re` can take exponential time on some patterns (`(a+)+$` on a line of 40 `a`s and a `b`)
and holds the GIL while it does: in a thread it would freeze Peri and make it deaf to Ctrl+C. In
this process it costs nothing but the process, which Grep kills at its deadline or when the call is
cancelled. Started as `python -P grepsearch.py` (the workspace never shadows a module); reads one
JSON request on stdin and writes one JSON object per line: {"out": text} for a result line,
{"big": path} for a file skipped for its size.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

SNIFF_BYTES = 8192


def _load_walk() -> ModuleType:
    """walk.py by its path: importing the tools package would cost more than the search."""
    name = "_peri_walk"
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("walk.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _printable(text: str) -> str:
    """File names that are not UTF-8 come back as U+FFFD, as ripgrep prints them."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _lines(walk: ModuleType, path: str, max_bytes: int) -> tuple[list[str] | None, bool]:
    """(numbered lines' texts or None when unreadable or binary, too big)."""
    try:
        fd = walk.open_regular(path)
        if fd is None:
            return None, False
        with os.fdopen(fd, "rb") as f:
            if os.fstat(f.fileno()).st_size > max_bytes:
                return None, True
            head = f.read(SNIFF_BYTES)
            if b"\0" in head:
                return None, False
            data = head + f.read(max_bytes - len(head))
    except (OSError, ValueError):
        return None, False
    text = data.decode("utf-8", errors="replace")
    return [line.removesuffix("\r") for line in text.split("\n")], False


def _search(request: dict[str, Any], emit: Any) -> None:
    walk = _load_walk()
    regex = re.compile(request["pattern"])
    root = request["root"]
    if os.path.isdir(root):
        select = None
        if request["select"] is not None:
            glob = re.compile(request["select"], re.DOTALL)
            by_name = request["select_by_name"]

            def select(rel: str, name: str) -> bool:
                return glob.match(name if by_name else rel) is not None

        files = walk.walk(
            root,
            respect_ignores=request["respect_ignores"],
            skip_dirs=frozenset(request["skip_dirs"]),
            select=select,
        )
    else:
        files = iter([(root, os.path.basename(root))])
    for path, _rel in files:
        _search_file(request, regex, walk, path, emit)


def _search_file(
    request: dict[str, Any], regex: re.Pattern[str], walk: ModuleType, path: str, emit: Any
) -> None:
    mode = request["mode"]
    shown = _printable(walk.display_path(path, request["workspace"]))
    lines, too_big = _lines(walk, path, request["max_file_bytes"])
    if too_big:
        emit({"big": shown})
        return
    if lines is None:
        return
    if lines and lines[-1] == "":
        lines.pop()  # the text after the last newline
    count = 0
    for number, line in enumerate(lines, 1):
        if regex.search(line) is None:
            continue
        count += 1
        if mode == "files_with_matches":
            break
        if mode == "content":
            emit({"out": f"{shown}:{number}:{line[: request['max_line_chars'] + 1]}"})
    if count and mode == "files_with_matches":
        emit({"out": shown})
    elif count and mode == "count":
        emit({"out": f"{shown}:{count}"})
    if count:
        sys.stdout.flush()  # what is found reaches Grep even if it stops this process


def main() -> int:
    request = json.loads(sys.stdin.buffer.read())

    def emit(item: dict[str, str]) -> None:
        sys.stdout.write(json.dumps(item) + "\n")

    _search(request, emit)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
