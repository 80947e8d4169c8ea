"""The first frame's import budget (`start.py --budget`): the modules imported before the TUI's
first frame, from `python -X importtime`, grouped by Peri's rooms and by third-party package.

The TUI is launched under tmux as `start.py` does, through a prelude that sends `-X importtime`'s
lines (fd 2) to a file while Textual keeps drawing on the terminal, and writes a marker into that
file when the first frame has been drawn: the lines before the marker are what the first frame
imported (the runtime is built after it, in a thread).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import _util as u

MARKER = "peri-bench: first frame drawn"
ROOMS = ("base", "session", "context", "permissions", "extensions", "agent")
ROOMS += ("providers", "tools", "mcp", "sandbox", "sdk", "tui")
# What the first frame must not import: the core past `base`'s stdlib-only modules, the adapters,
# the door, pydantic and the provider/MCP SDKs. Grouped names as `groups()` prints them.
NOT_FIRST = (
    "peri_cli.session",
    "peri_cli.context",
    "peri_cli.permissions",
    "peri_cli.extensions",
    "peri_cli.agent",
    "peri_cli.providers",
    "peri_cli.tools",
    "peri_cli.mcp",
    "peri_cli.sandbox",
    "peri_cli.sdk",
    "pydantic",
    "pydantic_core",
    "anthropic",
    "openai",
    "mcp",
    "httpx",
    "httpx2",
    "tiktoken",
    "yaml",
    "tree_sitter_bash",
)

PRELUDE = """
import os, sys
# `-X importtime` writes to fd 2: into the log. Textual draws on sys.__stderr__: the terminal.
log = os.open(os.environ["PERI_BENCH_IMPORTS"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
tty = os.dup(2)
os.dup2(log, 2)
sys.__stderr__ = sys.stderr = os.fdopen(tty, "w", buffering=1)
from textual.screen import Screen
_update = Screen._on_timer_update
def _first(self):
    _update(self)
    if Screen._on_timer_update is _first:
        Screen._on_timer_update = _update
        os.write(2, b"MARKER\\n")
Screen._on_timer_update = _first
"""
PERI = "from peri_cli.cli import main\nsys.exit(main(sys.argv[1:]))\n"


@dataclass
class Entry:
    name: str
    self_us: int
    cumulative_us: int
    depth: int


def first_frame_imports(
    tmux: u.Tmux, program: str, env: Mapping[str, str], cwd: Path, log: Path
) -> list[Entry]:
    """Launch `program` (Python source run after the prelude) and read its imports up to the
    first frame."""
    script = log.with_suffix(".py")
    script.write_text(PRELUDE.replace("MARKER", MARKER) + program)
    log.unlink(missing_ok=True)
    env = {**env, "PERI_BENCH_IMPORTS": str(log)}
    tmux.spawn([u.PY, "-X", "importtime", str(script)], env, cwd)
    try:
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline:
            text = log.read_text(errors="replace") if log.exists() else ""
            if MARKER in text:
                return parse(text.split(MARKER)[0])
            time.sleep(0.05)
        raise RuntimeError(f"no first frame within 30 s: {text[-300:]}")
    finally:
        tmux.stop_pane()


def parse(text: str) -> list[Entry]:
    out = []
    for line in text.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            out.append(Entry(m.group(4), int(m.group(1)), int(m.group(2)), len(m.group(3))))
    return out


def group_of(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "peri_cli":
        room = parts[1] if len(parts) > 1 else ""
        return f"peri_cli.{room}" if room in ROOMS else "peri_cli (cli, package)"
    top = parts[0]
    if top in sys.stdlib_module_names or top.lstrip("_") in sys.stdlib_module_names:
        return "(stdlib)"
    return top.lstrip("_") if top in ("_pydantic_core",) else top


def groups(entries: list[Entry]) -> list[tuple[str, int, float, float]]:
    """(group, modules, self ms summed, cumulative ms of its outermost imports), heaviest first.
    An import's parent is the next line up the tree (`-X importtime` prints children first)."""
    rows: dict[str, list[float]] = {}
    for i, e in enumerate(entries):
        g = group_of(e.name)
        parent = next((p for p in entries[i + 1 :] if p.depth < e.depth), None)
        row = rows.setdefault(g, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += e.self_us / 1000
        if parent is None or group_of(parent.name) != g:
            row[2] += e.cumulative_us / 1000
    return sorted(((g, int(r[0]), r[1], r[2]) for g, r in rows.items()), key=lambda r: -r[2])


def report(peri: list[Entry], floor: list[Entry]) -> str:
    """The budget table, what the minimal app imports beside it, and the forbidden list."""
    floor_names = {e.name for e in floor}
    total = sum(e.self_us for e in peri) / 1000
    extra = [e for e in peri if e.name not in floor_names]
    lines = [
        f"## First frame's imports (`-X importtime`, up to the first frame): {len(peri)} modules, "
        f"{total:.0f} ms self time in all; the minimal Textual app: {len(floor)} modules, "
        f"{sum(e.self_us for e in floor) / 1000:.0f} ms",
        u.table(
            ["group (room or package)", "modules", "self ms (sum)", "cumulative ms (outermost)"],
            [[g, str(n), f"{s:.1f}", f"{c:.1f}"] for g, n, s, c in groups(peri)],
        ),
        f"beyond the minimal app: {len(extra)} modules, "
        f"{sum(e.self_us for e in extra) / 1000:.0f} ms self time: "
        + ", ".join(f"{g} {s:.1f}" for g, _n, s, _c in groups(extra)[:12]),
    ]
    found = {group_of(e.name) for e in peri}
    bad = [g for g in NOT_FIRST if g in found]
    lines.append(
        "must not be imported before the first frame: "
        + ", ".join(NOT_FIRST)
        + f" -> {'found: ' + ', '.join(bad) if bad else 'none imported'} ({u.verdict(not bad)})"
    )
    return "\n".join(lines)
